// For each case given as JSON on stdin ({paths} or {names}), print what the dashboard and the
// HTML plot draw: the chart list of every run in the streams (`chartList`, runs overlaid), or
// the chart each series name goes on (`chartOf`); one canonical JSON value per line.
import { readFileSync } from "node:fs";
import { canonicalStringify, StreamReader } from "../../../../typescript/dist/index.js";
import { chartList, chartOf } from "../../../../typescript/dist/charts.js";

function runsOf(path) {
  const reader = new StreamReader({ series: true });
  reader.feed(new Uint8Array(readFileSync(path)));
  return reader.series.runIds().map((runId) => [runId, reader.series.run(runId)]);
}

for (const request of JSON.parse(readFileSync(0, "utf8"))) {
  const answer = request.paths !== undefined
    ? chartList(request.paths.flatMap(runsOf))
    : request.names.map((name) => chartOf(name));
  process.stdout.write(canonicalStringify(answer) + "\n");
}
