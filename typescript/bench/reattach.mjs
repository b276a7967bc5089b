// A fresh TypeScript reader re-attached at OFFSET: read what follows and fold it, REPEATS times.
// Usage: node --expose-gc bench/reattach.mjs STREAM OFFSET REPEATS
import { statSync } from "node:fs";
import { StreamReader } from "trainwire";
import { readChunks, report, timed } from "./_measure.mjs";

const [path, offsetText, repeatsText] = process.argv.slice(2);
const offset = Number(offsetText);
const size = statSync(path).size;

function reattach() {
  const reader = new StreamReader({ offset });
  readChunks(path, (chunk) => reader.feed(chunk), offset);
  return reader.toState().consumed_bytes;
}

const seconds = [];
for (let repeat = 0; repeat < Number(repeatsText); repeat++) {
  const { seconds: elapsed, result: consumed } = timed(reattach);
  if (consumed !== size) throw new Error(`re-attached at ${offset}, consumed up to ${consumed}, not ${size}`);
  seconds.push(elapsed);
}
report({ seconds });
