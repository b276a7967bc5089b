// Fold a (large) stream into run state with a StreamReader fed 1 MiB chunks; report the peak
// resident memory above the RSS after start-up. Usage: node bench/fold-memory.mjs STREAM
import { resourceUsage } from "node:process";
import { StreamReader } from "trainwire";
import { readChunks, report } from "./_measure.mjs";

const [path] = process.argv.slice(2);
const startBytes = process.memoryUsage.rss();
const started = performance.now();
const reader = new StreamReader();
readChunks(path, (chunk) => reader.feed(chunk));
const state = reader.toState();
report({
  bytes: state.consumed_bytes,
  runs: state.runs.length,
  seconds: (performance.now() - started) / 1000,
  start_bytes: startBytes,
  peak_bytes: resourceUsage().maxRSS * 1024, // the process's high-water mark, in KiB
});
