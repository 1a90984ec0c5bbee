/* Interactive figures of the static site, without a kernel (book/engine/static_figures.md).
 *
 * A chapter's cell (book/static_figs.py) writes <figure class="amp-jsfig"> holding the
 * precomputed grid of one figure as JSON (scripts/build_static_figures.py). This script adds
 * the controls (dropdowns, sliders over the grid values, tick boxes), draws the chosen grid
 * point as an SVG plot sized to the column (redrawn when the width changes) and says which grid
 * point is shown. No-op on pages without such a figure; nothing is loaded from anywhere.
 * Without JavaScript the figure shows no control at all (only a sentence saying so). */
(function () {
  "use strict";
  var SVGNS = "http://www.w3.org/2000/svg";

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function sv(tag, attrs, text) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function fmt(v) {
    if (v === 0) return "0";
    var a = Math.abs(v);
    if (a >= 1e5 || a < 1e-3) {
      var e = Math.floor(Math.log10(a) + 1e-9), m = v / Math.pow(10, e);
      var ms = Math.abs(m - 1) < 1e-9 ? "" : (+m.toPrecision(2)) + "×";
      return ms + "10" + String(e).replace(/-/, "−").split("").map(function (c) {
        return "⁰¹²³⁴⁵⁶⁷⁸⁹"["0123456789".indexOf(c)] || (c === "−" ? "⁻" : c);
      }).join("");
    }
    if (a >= 1000) return Math.round(v).toLocaleString("en-US");
    return String(+v.toPrecision(3));
  }

  // ------------------------------------------------------------------ scales and ticks
  function scale(lo, hi, log, a, b) {
    if (log) { lo = Math.log10(lo); hi = Math.log10(hi); }
    var f = function (v) {
      var t = log ? Math.log10(v) : v;
      return a + (t - lo) / (hi - lo || 1) * (b - a);
    };
    return f;
  }
  function ticks(lo, hi, log, integer, maxCount) {
    var out = [], k, m;
    if (log) {
      var e0 = Math.floor(Math.log10(lo)), e1 = Math.ceil(Math.log10(hi));
      var mult = (e1 - e0 <= 2) ? [1, 2, 5] : [1];
      for (k = e0; k <= e1; k++) for (m = 0; m < mult.length; m++) {
        var v = mult[m] * Math.pow(10, k);
        if (v >= lo * 0.999 && v <= hi * 1.001) out.push(v);
      }
      var step = Math.ceil(out.length / maxCount);
      return out.filter(function (_, i) { return i % step === 0; });
    }
    var span = hi - lo || 1, raw = span / maxCount;
    var p = Math.pow(10, Math.floor(Math.log10(raw))), s = [1, 2, 5, 10].map(function (x) {
      return x * p; }).find(function (x) { return x >= raw; });
    if (integer) s = Math.max(1, Math.round(s));
    for (var t = Math.ceil(lo / s) * s; t <= hi + s * 1e-9; t += s) out.push(+t.toPrecision(12));
    return out;
  }
  function extent(frame, axis, xmax) {
    var vals = [];
    frame.series.forEach(function (s) {
      var xs = s.x;
      if (axis === "x") {
        if (Array.isArray(xs)) xs.forEach(function (v, i) {
          if (v !== null && (s.y === undefined || !Array.isArray(s.y) || s.y[i] !== null)) vals.push(v);
        });
        else if (s.kind === "vline") vals.push(xs);
        if (s.kind === "vspan") vals.push(s.x0, s.x1);
        if (s.kind === "bar" && Array.isArray(xs)) vals.push(xs[0] - 0.6, xs[xs.length - 1] + 0.6);
      } else {
        var keep = function (v, i) {
          return v !== null && (!Array.isArray(xs) || xmax === null || xs[i] <= xmax);
        };
        if (Array.isArray(s.y)) s.y.forEach(function (v, i) { if (keep(v, i)) vals.push(v); });
        else if (s.kind === "hline" && s.y !== null) vals.push(s.y);
        if (Array.isArray(s.y2)) s.y2.forEach(function (v, i) { if (keep(v, i)) vals.push(v); });
      }
    });
    if (axis === "x" && xmax !== null) vals = vals.filter(function (v) { return v <= xmax; });
    return vals;
  }

  // ------------------------------------------------------------------ drawing
  function draw(fig, st) {
    var spec = st.spec, frame = spec.frames[st.key], axes = spec.axes;
    var xmax = st.xmax, width = Math.max(260, Math.floor(st.plot.clientWidth || 600));
    var height = Math.round(Math.min(420, Math.max(240, width * 0.6)));
    var ml = width < 480 ? 50 : 62, mr = 12, mt = 10;
    var mb = axes.x.ticklabels ? 54 : 44;
    var svg = sv("svg", {width: width, height: height, viewBox: "0 0 " + width + " " + height,
                         role: "img", "class": "amp-jsfig-svg",
                         "aria-label": frame.title + " (" + st.pointText + ")"});
    var xs = extent(frame, "x", xmax), ys = extent(frame, "y", xmax);
    var xlo = Math.min.apply(null, xs), xhi = Math.max.apply(null, xs);
    var ylo = Math.min.apply(null, ys), yhi = Math.max.apply(null, ys);
    if (axes.y.log) {
      ys = ys.filter(function (v) { return v > 0; });
      ylo = Math.min.apply(null, ys); yhi = Math.max.apply(null, ys);
      ylo /= 1.25; yhi *= 1.25;
    } else {
      var pad = (yhi - ylo || Math.abs(yhi) || 1) * 0.06;
      ylo = axes.y.zero && ylo >= 0 ? 0 : ylo - pad; yhi += pad;
    }
    if (axes.x.log) { xlo /= 1.15; xhi *= 1.15; }
    else if (!axes.x.ticklabels) {
      var px = (xhi - xlo || 1) * 0.05; xlo -= px; xhi += px;
    }
    var X = scale(xlo, xhi, axes.x.log, ml, width - mr);
    var Y = scale(ylo, yhi, axes.y.log, height - mb, mt);
    var g = sv("g", {"font-size": width < 480 ? 11 : 12, "font-family": "sans-serif"});
    svg.appendChild(g);
    // grid and ticks
    var xt = axes.x.ticklabels ? [] : ticks(xlo, xhi, axes.x.log, axes.x.integer,
                                            Math.max(3, Math.floor((width - ml) / 70)));
    var yt = ticks(ylo, yhi, axes.y.log, false, Math.max(3, Math.floor(height / 50)));
    xt.forEach(function (t) {
      var x = X(t);
      g.appendChild(sv("line", {x1: x, x2: x, y1: mt, y2: height - mb, stroke: "#e3e3e3"}));
      g.appendChild(sv("text", {x: x, y: height - mb + 15, "text-anchor": "middle",
                                fill: "#333"}, fmt(t)));
    });
    if (axes.x.ticklabels) {
      var labs = axes.x.ticklabels, every = Math.max(1, Math.ceil(labs.length * 11 / (width - ml)));
      labs.forEach(function (lab, i) {
        if (i % every) return;
        var x = X(i);
        g.appendChild(sv("text", {x: x, y: height - mb + 6, "font-size": 8, fill: "#333",
                                  transform: "rotate(-90 " + x + " " + (height - mb + 6) + ")",
                                  "text-anchor": "end", "dominant-baseline": "middle"}, lab));
      });
    }
    yt.forEach(function (t) {
      var y = Y(t);
      g.appendChild(sv("line", {x1: ml, x2: width - mr, y1: y, y2: y, stroke: "#e3e3e3"}));
      g.appendChild(sv("text", {x: ml - 5, y: y + 4, "text-anchor": "end", fill: "#333"},
                       fmt(t)));
    });
    g.appendChild(sv("rect", {x: ml, y: mt, width: width - mr - ml, height: height - mb - mt,
                              fill: "none", stroke: "#555"}));
    g.appendChild(sv("text", {x: (ml + width - mr) / 2, y: height - 6, "text-anchor": "middle",
                              fill: "#111"}, axes.x.label));
    var yl = (height - mb + mt) / 2;
    g.appendChild(sv("text", {x: 12, y: yl, "text-anchor": "middle", fill: "#111",
                              transform: "rotate(-90 12 " + yl + ")"}, axes.y.label));
    // series (clipped to the plot area)
    var clipId = fig.id + "-clip";
    var defs = sv("defs"), cp = sv("clipPath", {id: clipId});
    cp.appendChild(sv("rect", {x: ml, y: mt, width: width - mr - ml, height: height - mb - mt}));
    defs.appendChild(cp); svg.insertBefore(defs, g);
    var plot = sv("g", {"clip-path": "url(#" + clipId + ")"});
    g.appendChild(plot);
    var y0 = axes.y.log ? height - mb : Y(Math.max(ylo, 0));
    var inX = function (x) { return xmax === null || x <= xmax; };
    frame.series.forEach(function (s) {
      if (s.group && !st.groups[s.group]) return;
      var col = s.color, pts = [];
      if (Array.isArray(s.x)) s.x.forEach(function (x, i) {
        var y = s.y[i];
        if (y !== null && inX(x) && !(axes.y.log && y <= 0)) pts.push([X(x), Y(y)]);
        else pts.push(null);
      });
      var segs = [], cur = [];
      pts.forEach(function (p) { if (p) cur.push(p); else { if (cur.length) segs.push(cur); cur = []; } });
      if (cur.length) segs.push(cur);
      var ok = pts.filter(Boolean);
      var marker = function (p) {
        if (s.marker === "square")
          return sv("rect", {x: p[0] - 3, y: p[1] - 3, width: 6, height: 6, fill: col});
        if (s.marker === "triangle")
          return sv("path", {d: "M" + p[0] + " " + (p[1] - 4) + "l3.6 6.5h-7.2z", fill: col});
        return sv("circle", {cx: p[0], cy: p[1], r: s.kind === "points" ? 3.5 : 2.8, fill: col});
      };
      if (s.kind === "line" || s.kind === "linepoints") segs.forEach(function (seg) {
        plot.appendChild(sv("polyline", {points: seg.map(function (p) { return p.join(","); }).join(" "),
                                         fill: "none", stroke: col, "stroke-width": 2,
                                         "stroke-dasharray": s.dash || "none"}));
      });
      if (s.kind === "linepoints" || s.kind === "points") ok.forEach(function (p) {
        plot.appendChild(marker(p));
      });
      if (s.kind === "stem") ok.forEach(function (p) {
        plot.appendChild(sv("line", {x1: p[0], x2: p[0], y1: y0, y2: p[1], stroke: col,
                                     "stroke-width": 2}));
        plot.appendChild(marker(p));
      });
      if (s.kind === "bar") {
        var bw = Math.max(1, (X(1) - X(0)) * 0.8);
        ok.forEach(function (p) {
          plot.appendChild(sv("rect", {x: p[0] - bw / 2, y: Math.min(p[1], y0), width: bw,
                                       height: Math.abs(y0 - p[1]), fill: col}));
        });
      }
      if (s.kind === "band") {
        var lo = [], hi = [];
        s.x.forEach(function (x, i) {
          if (s.y[i] !== null && s.y2[i] !== null && inX(x)) {
            lo.push([X(x), Y(s.y[i])]); hi.push([X(x), Y(s.y2[i])]);
          }
        });
        if (lo.length) plot.appendChild(sv("polygon", {
          points: lo.concat(hi.reverse()).map(function (p) { return p.join(","); }).join(" "),
          fill: col, "fill-opacity": 0.25, stroke: col, "stroke-opacity": 0.4}));
      }
      if (s.kind === "hline" && s.y !== null && !(axes.y.log && s.y <= 0))
        plot.appendChild(sv("line", {x1: ml, x2: width - mr, y1: Y(s.y), y2: Y(s.y), stroke: col,
                                     "stroke-width": 2, "stroke-dasharray": s.dash || "none"}));
      if (s.kind === "vline")
        plot.appendChild(sv("line", {x1: X(s.x), x2: X(s.x), y1: mt, y2: height - mb, stroke: col,
                                     "stroke-width": 2, "stroke-dasharray": s.dash || "none"}));
      if (s.kind === "vspan")
        plot.appendChild(sv("rect", {x: X(s.x0), y: mt, width: Math.max(0, X(s.x1) - X(s.x0)),
                                     height: height - mb - mt, fill: col, "fill-opacity": 0.15}));
    });
    st.plot.replaceChildren(svg);
    // legend: the series shown
    var legend = el("ul", {"class": "amp-jsfig-legend"});
    frame.series.forEach(function (s) {
      if (s.group && !st.groups[s.group]) return;
      var li = el("li"), sw = sv("svg", {width: 26, height: 12, "aria-hidden": "true"});
      if (s.kind === "bar" || s.kind === "band" || s.kind === "vspan")
        sw.appendChild(sv("rect", {x: 2, y: 1, width: 22, height: 10, fill: s.color,
                                   "fill-opacity": s.kind === "bar" ? 1 : 0.3}));
      else if (s.marker === "square")
        sw.appendChild(sv("rect", {x: 9.5, y: 2.5, width: 7, height: 7, fill: s.color}));
      else if (s.marker === "triangle")
        sw.appendChild(sv("path", {d: "M13 1.5l4 7.5h-8z", fill: s.color}));
      else if (s.kind === "points" || s.kind === "stem")
        sw.appendChild(sv("circle", {cx: 13, cy: 6, r: 3.5, fill: s.color}));
      else sw.appendChild(sv("line", {x1: 1, x2: 25, y1: 6, y2: 6, stroke: s.color,
                                      "stroke-width": 2, "stroke-dasharray": s.dash || "none"}));
      li.appendChild(sw); li.appendChild(document.createTextNode(s.label));
      legend.appendChild(li);
    });
    st.legend.replaceChildren(legend);
    st.title.textContent = frame.title;
    st.note.textContent = frame.note || "";
    st.note.hidden = !frame.note;
  }

  // ------------------------------------------------------------------ controls
  function update(fig, st) {
    var spec = st.spec, keyParts = [], parts = [], extra = [];
    st.xmax = null;
    spec.controls.forEach(function (c, i) {
      var idx = st.index[i];
      if (c.kind === "select" || c.kind === "range") {
        keyParts.push(idx);
        parts.push(c.label + " = " + c.labels[idx]);
        if (st.readout[i]) st.readout[i].textContent = c.labels[idx];
      } else if (c.kind === "xmax") {
        st.xmax = c.values[idx];
        extra.push(c.label + " = " + c.labels[idx]);
        if (st.readout[i]) st.readout[i].textContent = c.labels[idx];
      } else if (c.kind === "checks") {
        var on = c.values.filter(function (v) { return st.groups[v]; }).map(function (v) {
          return c.labels[c.values.indexOf(v)]; });
        extra.push(c.label + ": " + (on.length ? on.join(", ") : "none"));
      }
    });
    st.key = keyParts.join("|");
    var keys = Object.keys(spec.frames), n = keys.indexOf(st.key) + 1;
    st.pointText = "grid point " + n + " of " + keys.length + ": " + parts.join(", ") +
      (extra.length ? "; " + extra.join("; ") : "");
    st.point.textContent = "Shown: " + st.pointText;
    fig.dataset.point = st.key;
    draw(fig, st);
    fig.dataset.drawn = String(+(fig.dataset.drawn || 0) + 1);
  }

  // The stored form (scripts/build_static_figures.py, compact): a series names its shared
  // look by "s" (spec.styles); "x" absent means 0, 1, 2, ...; "yscale" multiplies whole "y".
  function expand(spec) {
    Object.keys(spec.frames).forEach(function (key) {
      spec.frames[key].series = spec.frames[key].series.map(function (s) {
        var out = {}, k, base = s.s !== undefined ? spec.styles[s.s] : {};
        for (k in base) out[k] = base[k];
        for (k in s) if (k !== "s") out[k] = s[k];
        if (out.yscale) {
          out.y = out.y.map(function (v) { return v === null ? null : v * out.yscale; });
        }
        if (Array.isArray(out.y) && out.x === undefined) {
          out.x = out.y.map(function (_, i) { return i; });
        }
        return out;
      });
    });
    return spec;
  }

  function build(fig) {
    var data = fig.querySelector("script.amp-jsfig-data");
    if (!data) return;
    var spec = expand(JSON.parse(data.textContent));
    var st = {spec: spec, index: [], readout: [], groups: {}, xmax: null};
    var box = el("div", {"class": "amp-jsfig-controls"});
    spec.controls.forEach(function (c, i) {
      var id = fig.id + "-" + c.key, wrap = el("div", {"class": "amp-jsfig-control"});
      st.index[i] = Array.isArray(c.default) ? 0 : c.default;
      if (c.kind === "select") {
        wrap.appendChild(el("label", {"for": id}, c.label + " "));
        var s = el("select", {id: id, "data-control": c.key});
        c.labels.forEach(function (lab, j) { s.appendChild(el("option", {value: j}, lab)); });
        s.value = String(c.default);
        s.addEventListener("change", function () { st.index[i] = +s.value; update(fig, st); });
        wrap.appendChild(s);
      } else if (c.kind === "range" || c.kind === "xmax") {
        wrap.appendChild(el("label", {"for": id}, c.label + " "));
        var r = el("input", {id: id, type: "range", min: 0, max: c.values.length - 1, step: 1,
                             "data-control": c.key});
        r.value = String(c.default);
        var out = el("output", {"for": id, "class": "amp-jsfig-readout"});
        st.readout[i] = out;
        r.addEventListener("input", function () { st.index[i] = +r.value; update(fig, st); });
        wrap.appendChild(r); wrap.appendChild(out);
      } else if (c.kind === "checks") {
        wrap.appendChild(el("span", {"class": "amp-jsfig-checks-label"}, c.label + ": "));
        c.values.forEach(function (v, j) {
          st.groups[v] = c.default[j];
          var cid = id + "-" + v, lab = el("label", {"for": cid, "class": "amp-jsfig-check"});
          var cb = el("input", {id: cid, type: "checkbox", "data-control": c.key + ":" + v});
          cb.checked = c.default[j];
          cb.addEventListener("change", function () { st.groups[v] = cb.checked; update(fig, st); });
          lab.appendChild(cb); lab.appendChild(document.createTextNode(" " + c.labels[j]));
          wrap.appendChild(lab);
        });
      }
      box.appendChild(wrap);
    });
    st.point = el("p", {"class": "amp-jsfig-point", "aria-live": "polite"});
    st.title = el("p", {"class": "amp-jsfig-title"});
    st.plot = el("div", {"class": "amp-jsfig-plot"});
    st.legend = el("div");
    st.note = el("p", {"class": "amp-jsfig-note"});
    var fallback = fig.querySelector(".amp-jsfig-nojs");
    if (fallback) fallback.remove();
    var cap = fig.querySelector("figcaption");
    [box, st.point, st.title, st.plot, st.legend, st.note].forEach(function (e) {
      fig.insertBefore(e, cap);
    });
    update(fig, st);
    var last = st.plot.clientWidth;
    window.addEventListener("resize", function () {
      if (st.plot.clientWidth !== last) { last = st.plot.clientWidth; draw(fig, st); }
    });
    fig.dataset.ready = "1";
  }

  function init() {
    document.querySelectorAll("figure.amp-jsfig").forEach(function (fig) {
      try { build(fig); } catch (e) {
        console.error("amp-figures: " + (fig.id || "figure") + ": " + e);
      }
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
