/* Phones: wide tables and multi-panel figures scroll inside their own block (amp-phone.css).
 *
 * - every table of the article that has no scroll container gets one (div.amp-scroll);
 * - every large image of the article (at least 800 pixels wide: the multi-panel figures, such as
 *   chapter 7's 2 x 2 grids) or at least 1.8 times wider than tall (a row of panels) is marked
 *   img.amp-wide-figure and wrapped in div.amp-figure-scroll: on a narrow screen the CSS keeps
 *   it 640 px wide inside that box (each of two panels about 300 px), so its panels stay
 *   legible and the reader pans the figure, not the page.
 * The pixel sizes are those of the book's figures, drawn at 200 dpi (book/matplotlibrc: twice
 * the 100 dpi these thresholds were first chosen at, 800 and 400 pixels); every other figure
 * of a notebook is shown at most half its pixel width (two image pixels per CSS pixel).
 * No-op on pages without tables or images; nothing is loaded from anywhere. */
(function () {
  "use strict";
  var WIDE_RATIO = 1.8, LARGE = 1600, SMALL = 800;

  function wrap(el, cls) {
    var box = document.createElement("div");
    box.className = cls;
    el.parentNode.insertBefore(box, el);
    box.appendChild(el);
    return box;
  }

  function tables(root) {
    root.querySelectorAll("table").forEach(function (t) {
      if (t.closest(".pst-scrollable-table-container, .amp-scroll, .output.text_html")) return;
      wrap(t, "amp-scroll");
    });
  }

  function markWide(img) {
    var w = img.naturalWidth, h = img.naturalHeight;
    if (!w || (w < LARGE && w < WIDE_RATIO * h) || w < SMALL) return;
    if (img.classList.contains("amp-wide-figure")) return;
    img.classList.add("amp-wide-figure");
    var target = img.parentNode && img.parentNode.tagName === "A" ? img.parentNode : img;
    if (!target.closest(".amp-figure-scroll")) wrap(target, "amp-figure-scroll");
  }

  // A notebook's figure (a PNG output, 200 dpi) is shown at most half its pixel width: the
  // size it had at 100 dpi, with two image pixels per CSS pixel (sharp on a 2x screen). The
  // CSS reads the half width from --amp-half-width; a wide figure on a phone keeps its own
  // rule (640 px in its scroll box).
  function sharpen(img) {
    if (!img.naturalWidth || !img.closest(".cell_output")) return;
    if (!/\.png(\?|$)/i.test(img.currentSrc || img.src)) return;
    img.style.setProperty("--amp-half-width", img.naturalWidth / 2 + "px");   // amp-phone.css
  }

  function figures(root) {
    root.querySelectorAll("img").forEach(function (img) {
      var done = function () { markWide(img); sharpen(img); };
      if (img.complete) done();
      else img.addEventListener("load", done, {once: true});
    });
  }

  function run() {
    var root = document.querySelector("article.bd-article") || document.querySelector("main");
    if (!root) return;
    tables(root);
    figures(root);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", run);
  else run();
})();
