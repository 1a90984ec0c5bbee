/* MathJax 2 -> 3 shim for the ipywidgets loader (amp book).
 *
 * @jupyter-widgets/html-manager's embed.js typesets widget labels with the MathJax 2 API,
 *   window.MathJax && MathJax.Hub.Queue(["Typeset", MathJax.Hub, element])
 * while the book ships MathJax 3 (sphinx-mathjax-offline), which has no `Hub`. Without this
 * shim every page with math *and* widgets logs "Cannot read properties of undefined (reading
 * 'Queue')". book/_ext/amp_offline.py adds this file only to such pages, after Sphinx's inline
 * MathJax configuration and before the deferred MathJax script runs.
 *
 * The shim installs `MathJax.Hub` on the real MathJax 3 object once it is ready (through the
 * `startup.ready` hook of the configuration object) and maps Queue/Typeset to typesetPromise.
 */
(function () {
  "use strict";

  var pending = [];

  // Widget labels use MathJax 2's "$...$" / "$$...$$" delimiters, which the book's MathJax 3
  // configuration does not enable (myst turns "$" math into "\(...\)" at build time). Rewrite
  // them in the widget's own text nodes, and only there, before typesetting.
  var DISPLAY = /\$\$([^$]+?)\$\$/g;
  var INLINE = /(^|[^\\])\$([^$]+?)\$/g;

  function convertDelimiters(root) {
    if (!root || !root.nodeType) {
      return;
    }
    var walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    var nodes = [];
    for (var n = walker.nextNode(); n; n = walker.nextNode()) {
      if (n.nodeValue.indexOf("$") !== -1) {
        nodes.push(n);
      }
    }
    nodes.forEach(function (node) {
      node.nodeValue = node.nodeValue
        .replace(DISPLAY, "\\[$1\\]")
        .replace(INLINE, "$1\\($2\\)");
    });
  }

  function typeset(elements) {
    if (elements) {
      elements.forEach(convertDelimiters);
    }
    var mj = window.MathJax;
    if (mj && typeof mj.typesetPromise === "function") {
      return mj.typesetPromise(elements).catch(function (err) {
        console.warn("amp MathJax shim: typesetting failed:", err);
      });
    }
    if (elements) {
      pending.push.apply(pending, elements);
    }
    return Promise.resolve();
  }

  var Hub = {
    Queue: function () {
      for (var i = 0; i < arguments.length; i++) {
        var job = arguments[i];
        if (typeof job === "function") {
          job();
        } else if (Array.isArray(job) && job[0] === "Typeset") {
          typeset(job[2] ? [job[2]] : undefined);
        }
      }
    },
    Typeset: function (element) {
      return typeset(element ? [element] : undefined);
    },
    Config: function () {},
    Register: { StartupHook: function () {}, MessageHook: function () {} },
  };

  function install(mj) {
    if (!mj.Hub) {
      mj.Hub = Hub;
    }
    if (pending.length) {
      var els = pending;
      pending = [];
      typeset(els);
    }
  }

  var mj = window.MathJax;
  if (mj && mj.version) {
    // MathJax 3 already loaded.
    install(mj);
    return;
  }
  // MathJax 3 not loaded yet: window.MathJax is (or becomes) its configuration object.
  var config = mj || (window.MathJax = {});
  config.startup = config.startup || {};
  var previousReady = config.startup.ready;
  config.startup.ready = function () {
    if (typeof previousReady === "function") {
      previousReady();
    } else {
      window.MathJax.startup.defaultReady();
    }
    install(window.MathJax);
  };
})();
