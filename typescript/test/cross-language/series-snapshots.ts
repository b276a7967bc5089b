// For each case given as JSON on stdin ({path, max_points, max_markers}), print the TypeScript
// series store's canonical snapshot after reading the stream, one per line.
import { StreamReader } from "../../src/reader.js";
import { bytesOf, canonicalAnswer, requests } from "./requests.js";

for (const { path, max_points, max_markers } of requests<{ path: string; max_points: number; max_markers: number }>()) {
  const reader = new StreamReader({ series: { maxPoints: max_points, maxMarkers: max_markers } });
  reader.feed(bytesOf(path));
  canonicalAnswer(reader.series?.toJSON());
}
