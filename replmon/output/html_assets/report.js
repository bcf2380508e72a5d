(function () {
  "use strict";
  var charts = JSON.parse(document.getElementById("replmon-charts").textContent);
  var COLORS = {primary: ["#1565c0", "#00897b", "#5e35b1", "#0277bd"],
                replica: ["#e65100", "#c2185b", "#8d6e63", "#f9a825"],
                pair: ["#2e7d32"]};
  function bytes(v, per) {
    var units = ["B", "KiB", "MiB", "GiB", "TiB"], i = 0, a = Math.abs(v);
    while (a >= 1024 && i < units.length - 1) { a /= 1024; v /= 1024; i++; }
    return (Math.abs(v) >= 100 || i === 0 ? v.toFixed(0) : v.toFixed(1)) + " " + units[i] + per;
  }
  function fmt(unit, v, step) {
    if (v == null) return "-";
    if (unit === "B") return bytes(v, "");
    if (unit === "B/s") return bytes(v, "/s");
    if (unit === "KiB") return bytes(v * 1024, "");
    if (unit === "KiB/s") return bytes(v * 1024, "/s");
    if (unit === "link") return v >= 0.5 ? "up" : "down";
    var s = Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : +v.toFixed(2);
    if (step) {  // an axis: as many decimals as its step needs (96.25 %, 96.30 %, ...)
      var d = 0;
      while (d < 4 && Math.abs(step * Math.pow(10, d) - Math.round(step * Math.pow(10, d))) > 1e-6) d++;
      s = v.toLocaleString("en-US", {minimumFractionDigits: d, maximumFractionDigits: d});
    }
    return s + " " + unit;
  }
  function two(n) { return (n < 10 ? "0" : "") + n; }
  function clock(long) {
    // the terminal's clock (HH:MM:SS), the day first past 6 hours; x is already shifted to
    // the report's zone, so it reads as UTC
    return function (u, vs) {
      return vs.map(function (v) {
        var d = new Date(v * 1e3);
        var hm = two(d.getUTCHours()) + ":" + two(d.getUTCMinutes());
        return long ? two(d.getUTCDate()) + "/" + two(d.getUTCMonth() + 1) + " " + hm
                    : hm + ":" + two(d.getUTCSeconds());
      });
    };
  }
  function fits(u, values) {
    // an axis as wide as its longest label ("500 pages/s", "74,460 /s")
    if (!values) return 50;
    var most = Math.max.apply(null, values.map(function (v) { return String(v || "").length; }));
    return 28 + 7.5 * most;
  }
  function padded(least) {
    // a little room above and below, so that a flat line (a lag of 0 s) is drawn whole
    // inside the plot, not on its edge; a percent axis spans ``least`` at least
    return function (u, lo, hi) {
    if (lo == null || hi == null) return least || [0, 1];
    if (least) { lo = Math.min(lo, least[0]); hi = Math.max(hi, least[1]); }
    if (hi === lo) hi = lo + (Math.abs(lo) || 1);  // flat: the line near the bottom
    var pad = (hi - lo) * 0.06;
    return [lo - pad, hi + pad];
    };
  }
  function shade(spans) {
    return function (u) {
      var ctx = u.ctx, top = u.bbox.top, h = u.bbox.height;
      ctx.save();
      ctx.fillStyle = "rgba(198, 40, 40, 0.10)";
      spans.forEach(function (s) {
        var a = u.valToPos(s[0], "x", true), b = u.valToPos(s[1], "x", true);
        a = Math.max(a, u.bbox.left); b = Math.min(b, u.bbox.left + u.bbox.width);
        if (b > a) ctx.fillRect(a, top, Math.max(b - a, 2), h);
      });
      ctx.restore();
    };
  }
  charts.forEach(function (c, i) {
    var box = document.getElementById("chart-" + i);
    var used = {primary: 0, replica: 0, pair: 0};
    var series = [{}].concat(c.series.map(function (s) {
      var pal = COLORS[s.role] || COLORS.pair;
      // a series equal to an earlier one is dashed over it, and its label says so
      return {label: s.label + (s.right ? " (right axis)" : "") +
                     (s.same_as ? " (drawn over " + s.same_as + ": dashed)" : ""),
              scale: s.right ? "r" : "y", spanGaps: false, width: s.same_as ? 2 : 1.5,
              dash: s.same_as ? [6, 6] : undefined,
              stroke: pal[used[s.role]++ % pal.length],
              value: function (u, v) {
                // the legend: a value the server did not report, as every view says it
                if (v == null) return /Seconds_Behind/.test(s.label) ? "NULL" : "no value";
                return fmt(s.right ? c.right_unit : c.unit, v);
              }};
    }));
    // the time in the legend as the axis and the terminal write it
    series[0].value = function (u, v) { return v == null ? "" : clock(false)(u, [v])[0]; };
    var long = c.x.length > 1 && c.x[c.x.length - 1] - c.x[0] > 6 * 3600;
    var low = Math.min.apply(null, c.series.map(function (s) {
      return Math.min.apply(null, s.y.filter(function (v) { return v != null; }));
    }));
    var axes = [{values: clock(long), space: 70}, {scale: "y", size: fits,
                 values: function (u, vs) {
                   // no "-0.05 s" under a lag that never went below 0
                   var step = vs.length > 1 ? Math.abs(vs[1] - vs[0]) : 0;
                   return vs.map(function (v) { return v < 0 && low >= 0 ? "" : fmt(c.unit, v, step); });
                 }}];
    if (c.series.some(function (s) { return s.right; })) {
      var right = {scale: "r", side: 1, size: fits, grid: {show: false},
                   values: function (u, vs) { return vs.map(function (v) { return fmt(c.right_unit, v); }); }};
      if (c.right_unit === "link") right.splits = function () { return [0, 1]; };
      axes.push(right);
    }
    var title = document.createElement("div");
    title.className = "caption";
    title.textContent = c.title + " (" + c.note + (c.spans.length ? "; shaded: the findings' spans" : "") + ")";
    var scales = {x: {time: true}, y: {range: padded(c.y_least)}};
    if (c.right_unit === "link") scales.r = {range: [-0.1, 1.1]};
    var opts = {width: Math.max(400, box.clientWidth || 1000), height: 240, series: series, axes: axes,
                scales: scales,
                tzDate: function (ts) { return uPlot.tzDate(new Date(ts * 1e3), "Etc/UTC"); },
                hooks: {drawClear: [shade(c.spans)]}};
    var data = [c.x].concat(c.series.map(function (s) { return s.y; }));
    // the legend shows the values at the last point until the mouse points at another
    // (uPlot's own shows "--" placeholders until hovered: all a printed page has)
    var last = c.x.length - 1;
    opts.hooks.setCursor = [function (u) { if (u.cursor.idx == null) u.setLegend({idx: last}); }];
    box.appendChild(title);
    var plot = new uPlot(opts, data, box);
    plot.setLegend({idx: last});
    box.setAttribute("data-y-range", plot.scales.y.min + " " + plot.scales.y.max);
  });
  document.body.setAttribute("data-charts-drawn", String(charts.length));
})();
