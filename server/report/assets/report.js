// ccscope report: draws the panels from the embedded data with uPlot. Every
// chart shares the time axis: the cursor is synced, and a zoom (drag) or
// reset (double-click) on one panel sets the same x range on all of them.
(function () {
  "use strict";
  const D = JSON.parse(document.getElementById("ccscope-data").textContent);
  const G = D.grid;
  const n = G.n * G.slots;
  const x = new Array(n);
  for (let i = 0; i < n; i++) {
    const b = Math.floor(i / G.slots), s = i % G.slots;
    x[i] = ((b + (s + 0.5) / G.slots) * G.w_ps) / 1e12;
  }
  const decode = (s) => {
    const a = s.split(",");
    const out = new Array(n).fill(null);
    for (let i = 0; i < a.length && i < n; i++) if (a[i] !== "") out[i] = +a[i];
    return out;
  };
  const fmt = (v) => {
    if (v == null) return "–";
    const a = Math.abs(v);
    if (a === 0) return "0";
    if (a >= 1000) return v.toFixed(0);
    if (a >= 1) return v.toPrecision(4);
    return v.toPrecision(3);
  };
  const charts = [];
  let syncing = false;
  function syncX(u) {
    if (syncing) return;
    syncing = true;
    const min = u.scales.x.min, max = u.scales.x.max;
    for (const c of charts) if (c !== u) c.setScale("x", { min, max });
    syncing = false;
  }
  const stepped = uPlot.paths.stepped({ align: 1 });
  // The dash patterns of the runs drawn beside the page's own (report.maxBeside).
  const dashes = [[6, 4], [2, 3], [10, 3, 2, 3]];
  const root = document.getElementById("groups");
  const width = () => Math.max(480, root.clientWidth - 8);

  // textWidth measures a label in the axis font (uPlot's default), so an
  // axis of names ("recovery_enter") is wide enough to show them whole.
  const axisFont = '12px system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans", sans-serif';
  const measureCtx = document.createElement("canvas").getContext("2d");
  const textWidth = (s) => {
    measureCtx.font = axisFont;
    return measureCtx.measureText(s).width;
  };

  function namesAxis(names) {
    return {
      splits: () => names.map((_, i) => i),
      values: (u, splits) => splits.map((v) => (names[v] !== undefined ? names[v] : "")),
      range: () => [-0.5, names.length - 0.5],
    };
  }

  function build(ch, el) {
    const used = [false, false];
    ch.series.forEach((s) => (used[s.axis] = true));
    const scales = { x: { time: false } };
    const axes = [{ label: "time (s)", size: 36 }];
    ["y", "y2"].forEach((key, k) => {
      if (!used[k] && !(k === 0)) return;
      const ax = ch.axes[k];
      const sc = { auto: true };
      const a = { scale: key, label: ax.label, font: axisFont, size: 60 };
      // A names axis fits its longest name, past the ticks (10 px) and
      // their gap (5 px), with a margin.
      if (ax.names && ax.names.length) a.size = Math.ceil(Math.max(...ax.names.map(textWidth))) + 24;
      if (k === 1) { a.side = 1; a.grid = { show: false }; }
      if (ax.names && ax.names.length) {
        const na = namesAxis(ax.names);
        sc.range = na.range;
        a.splits = na.splits;
        a.values = na.values;
      } else if (ax.min != null || ax.max != null) {
        sc.range = (u, lo, hi) => {
          if (ax.min != null) lo = Math.min(ax.min, lo);
          if (ax.max != null && hi > ax.max) return [lo, ax.max]; // clipped: the title says so
          return [lo, hi > lo ? hi + (hi - lo) * 0.05 : lo + 1];
        };
      }
      scales[key] = sc;
      axes.push(a);
    });
    const data = [x];
    const series = [{ label: "t (s)", value: (u, v) => (v == null ? "–" : v.toFixed(6)) }];
    ch.series.forEach((s) => {
      data.push(decode(s.data));
      const counts = s.counts ? decode(s.counts) : null;
      const names = ch.axes[s.axis].names;
      const o = {
        label: s.unit ? s.label + " [" + s.unit + "]" : s.label,
        scale: s.axis === 0 ? "y" : "y2",
        stroke: s.color,
        width: 1.25,
        spanGaps: true,
        value: (u, v, si, i) => {
          if (counts) return i == null || counts[i] == null ? "–" : String(counts[i]);
          if (names && v != null && names[v] !== undefined) return names[v];
          return fmt(v);
        },
      };
      if (s.style === "step") o.paths = stepped;
      if (s.dash) o.dash = dashes[(s.dash - 1) % dashes.length]; // a run beside the page's own
      if (s.style === "points") {
        o.paths = () => null;
        o.points = { show: true, size: 5, fill: s.dash ? "#ffffff" : s.color, stroke: s.color };
      } else {
        o.points = { show: false };
      }
      series.push(o);
    });
    const h = ch.ticks ? 40 + 22 * ch.series.length : 210;
    const opts = {
      width: width(),
      height: h,
      scales,
      axes,
      series,
      legend: { live: true },
      cursor: { sync: { key: "ccscope-x", setSeries: false }, drag: { x: true, y: false } },
      hooks: { setScale: [(u, key) => { if (key === "x") syncX(u); }] },
    };
    const u = new uPlot(opts, data, el);
    u.ccscopeId = ch.id;
    charts.push(u);
  }

  for (const g of D.groups) {
    const sec = document.createElement("section");
    const h2 = document.createElement("h2");
    h2.textContent = g.title;
    sec.appendChild(h2);
    if (g.subtitle) {
      const p = document.createElement("p");
      p.className = "sub";
      p.textContent = g.subtitle;
      sec.appendChild(p);
    }
    for (const ch of g.charts) {
      const div = document.createElement("div");
      div.className = "panel";
      div.id = ch.id;
      const h3 = document.createElement("h3");
      h3.textContent = ch.title;
      div.appendChild(h3);
      sec.appendChild(div);
      root.appendChild(sec);
      build(ch, div);
    }
    root.appendChild(sec);
  }
  window.addEventListener("resize", () => {
    for (const c of charts) c.setSize({ width: width(), height: c.height });
  });
  window.ccscopeCharts = charts;
  window.ccscopeReady = true;
})();
