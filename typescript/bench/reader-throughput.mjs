// A StreamReader (decode, validate, fold) fed 1 MiB chunks vs split + JSON.parse per line, in Node.
// Usage: node --expose-gc bench/reader-throughput.mjs STREAM ROUNDS
import { readFileSync } from "node:fs";
import { readChunks, report } from "./_measure.mjs";
import { alternate, readAndFold, splitAndParse } from "./_rounds.mjs";

const [path, rounds] = process.argv.slice(2);
const result = alternate(
  Number(rounds),
  () => readAndFold((onChunk) => readChunks(path, onChunk)),
  () => splitAndParse(readFileSync(path, "utf8")), // reads the whole file, then splits
);
report({ ...result, engine: `Node ${process.version}` });
