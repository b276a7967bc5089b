// Draws the charts of `trainwire plot` with uPlot from the data embedded in the page.
// The page sets body[data-points] to the number of points drawn once every chart is made.
(function () {
  "use strict";
  var COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"];
  var spec = JSON.parse(document.getElementById("trainwire-data").textContent);
  var width = Math.max(480, Math.min(1100, document.documentElement.clientWidth - 48));

  function colour(run) {
    return COLOURS[run % COLOURS.length];
  }

  function text(tag, content) {
    var element = document.createElement(tag);
    element.textContent = content;
    return element;
  }

  // uPlot wants one sorted x array shared by every series: the union of their steps.
  function align(series) {
    var steps = {};
    series.forEach(function (s) {
      s.points.forEach(function (p) { steps[p[0]] = true; });
    });
    var xs = Object.keys(steps).map(Number).sort(function (a, b) { return a - b; });
    var index = new Map(xs.map(function (x, i) { return [x, i]; }));
    var columns = series.map(function (s) {
      var ys = new Array(xs.length).fill(null);
      s.points.forEach(function (p) { ys[index.get(p[0])] = p[1]; });
      return ys;
    });
    return [xs].concat(columns);
  }

  // Restarts (dash-dot) and checkpoints (dotted) as vertical lines in the run's colour.
  function markerPlugin(markers) {
    return {
      hooks: {
        draw: function (u) {
          var ctx = u.ctx;
          ctx.save();
          markers.forEach(function (m) {
            var x = Math.round(u.valToPos(m.step, "x", true));
            ctx.strokeStyle = colour(m.run);
            ctx.lineWidth = 1;
            ctx.setLineDash(m.kind === "checkpoint" ? [2, 3] : [8, 3, 2, 3]);
            ctx.beginPath();
            ctx.moveTo(x, u.bbox.top);
            ctx.lineTo(x, u.bbox.top + u.bbox.height);
            ctx.stroke();
          });
          ctx.restore();
        },
      },
    };
  }

  // Three significant digits: a learning rate of 8e-4 must not read as 0.001.
  function shortNumbers(u, values) {
    return values.map(function (v) { return v == null ? "" : String(Number(v.toPrecision(3))); });
  }

  var counts = spec.runs.map(function () { return 0; });
  var total = 0;
  var container = document.getElementById("charts");
  spec.charts.forEach(function (chart) {
    var section = document.createElement("section");
    section.className = "chart";
    container.appendChild(section);
    var series = [{ label: "step" }].concat(chart.series.map(function (s) {
      counts[s.run] += s.points.length;
      total += s.points.length;
      return {
        label: s.label,
        stroke: colour(s.run),
        width: 1.5,
        dash: s.dashed ? [6, 4] : undefined,
        spanGaps: true,
        points: { show: s.points.length < 60 },
      };
    }));
    new uPlot({
      title: chart.title,
      width: width,
      height: 280,
      scales: { x: { time: false } },
      axes: [{ label: "step" }, { size: 60, values: shortNumbers }],
      series: series,
      plugins: [markerPlugin(chart.markers)],
    }, align(chart.series), section);
  });
  var markers = spec.charts.length ? spec.charts[0].markers : [];
  if (markers.length) {
    var list = text("p", markers.map(function (m) {
      return spec.runs[m.run].run_id + ": " + m.label + " at step " + m.step;
    }).join("; "));
    list.className = "markers";
    container.parentNode.insertBefore(list, container);
  }
  var body = document.querySelector("#runs tbody");
  spec.runs.forEach(function (run, i) {
    var row = document.createElement("tr");
    [run.run_id, run.status, String(counts[i])].forEach(function (cell) { row.appendChild(text("td", cell)); });
    body.appendChild(row);
  });
  document.body.dataset.points = String(total);
})();
