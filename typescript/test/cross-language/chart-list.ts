// For each case given as JSON on stdin ({paths} or {names}), print what the dashboard and the
// HTML plot draw: the chart list of every run in the streams (`chartList`, runs overlaid), or
// the chart each series name goes on (`chartOf`); one canonical JSON value per line.
import { chartList, chartOf } from "../../src/charts.js";
import { StreamReader } from "../../src/reader.js";
import type { RunSeries } from "../../src/series.js";
import { bytesOf, canonicalAnswer, requests } from "./requests.js";

type ChartRequest = { paths: string[] } | { names: string[] };

function runsOf(path: string): [string, RunSeries][] {
  const reader = new StreamReader({ series: true });
  reader.feed(bytesOf(path));
  const store = reader.series;
  if (store === undefined) throw new Error("a reader with series: true has a series store");
  return store.runIds().flatMap((runId) => {
    const series = store.run(runId);
    return series === undefined ? [] : [[runId, series]];
  });
}

for (const request of requests<ChartRequest>()) {
  canonicalAnswer("paths" in request ? chartList(request.paths.flatMap(runsOf)) : request.names.map(chartOf));
}
