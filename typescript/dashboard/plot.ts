// The page `trainwire plot` writes: the runs' series store snapshots, embedded in the page,
// drawn by the dashboard's own charts. Built by scripts/build-dashboard.mjs.
import type uPlot from "uplot";
import { RunSeries, type RunSeriesSnapshot } from "../src/index.js";
import { Chart, chartGroups, type Marker } from "./chart.js";

interface PlotData {
  runs: { run_id: string; status: string; series: RunSeriesSnapshot }[];
}

const data = JSON.parse(document.getElementById("trainwire-data")?.textContent ?? "{}") as PlotData;
const groups = new Map<string, { series: Map<string, uPlot.AlignedData>; markers: Marker[] }>();
const table = document.querySelector("#runs tbody");
for (const run of data.runs) {
  const history = new RunSeries(run.run_id, { maxPoints: Infinity, maxMarkers: Infinity }, run.series);
  const row = document.createElement("tr");
  for (const text of [run.run_id, run.status, String(history.names().length)]) {
    const cell = document.createElement("td");
    cell.textContent = text;
    row.append(cell);
  }
  table?.append(row);
  const markers = history.markers().filter((marker) => marker.kind === "restart" || marker.kind === "checkpoint" || marker.kind === "stop");
  for (const [title, series] of chartGroups(history)) {
    const group = groups.get(title) ?? { series: new Map<string, uPlot.AlignedData>(), markers: [] as Marker[] };
    for (const [name, values] of series) group.series.set(data.runs.length > 1 ? `${run.run_id} ${name}` : name, values);
    group.markers.push(...markers);
    groups.set(title, group);
  }
  const notes = document.getElementById("markers");
  for (const marker of markers) {
    const item = document.createElement("li");
    item.textContent = `${run.run_id}: ${marker.kind} (${marker.label ?? ""}) at step ${marker.step ?? "?"}`;
    notes?.append(item);
  }
}
const container = document.getElementById("charts") as HTMLElement;
for (const [title, group] of groups) {
  const chart = new Chart(title, container);
  chart.update(group.series, group.markers, 0, false);
  chart.root.dataset["points"] = String(chart.points);
}
