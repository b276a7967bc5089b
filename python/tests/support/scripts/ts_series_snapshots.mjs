// For each case given as JSON on stdin ({path, max_points, max_markers}), print the TypeScript
// series store's canonical snapshot after reading the stream, one per line.
import { readFileSync } from "node:fs";
import { canonicalStringify, StreamReader } from "../../../../typescript/dist/index.js";

const cases = JSON.parse(readFileSync(0, "utf8"));
for (const { path, max_points: maxPoints, max_markers: maxMarkers } of cases) {
  const reader = new StreamReader({ series: { maxPoints, maxMarkers } });
  reader.feed(new Uint8Array(readFileSync(path)));
  process.stdout.write(canonicalStringify(reader.series.toJSON()) + "\n");
}
