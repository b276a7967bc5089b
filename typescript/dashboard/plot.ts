// The page `trainwire plot` writes: the runs' series store snapshots, embedded in the page,
// drawn by the dashboard's own charts. Built by scripts/build-dashboard.mjs.

import { chartList, MARKER_STYLES } from "../src/charts.js";
import { RunSeries, type RunSeriesSnapshot } from "../src/index.js";
import { Chart } from "./chart.js";

interface PlotData {
  runs: { run_id: string; status: string; series: RunSeriesSnapshot }[];
}

const data = JSON.parse(document.getElementById("trainwire-data")?.textContent ?? "{}") as PlotData;
const runs: [string, RunSeries][] = [];
const table = document.querySelector("#runs tbody");
const notes = document.getElementById("markers");
for (const run of data.runs) {
  const history = new RunSeries(run.run_id, { maxPoints: Infinity, maxMarkers: Infinity }, run.series);
  runs.push([run.run_id, history]);
  const row = document.createElement("tr");
  for (const text of [run.run_id, run.status, String(history.names().length)]) {
    const cell = document.createElement("td");
    cell.textContent = text;
    row.append(cell);
  }
  table?.append(row);
  for (const marker of history.markers().filter((drawn) => MARKER_STYLES.has(drawn.kind))) {
    const item = document.createElement("li");
    item.textContent = `${run.run_id}: ${marker.kind} (${marker.label ?? ""}) at step ${marker.step ?? "?"}`;
    notes?.append(item);
  }
}
const container = document.getElementById("charts") as HTMLElement;
for (const drawn of chartList(runs)) {
  const chart = new Chart(drawn.title, container);
  chart.update(drawn, 0, false);
  chart.root.dataset["points"] = String(chart.points);
}
