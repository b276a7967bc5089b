// Validated, typed events out of the TypeScript Decoder vs split + JSON.parse per line.
// Usage: node --expose-gc bench/reader-throughput.mjs STREAM ROUNDS
import { readFileSync } from "node:fs";
import { Decoder } from "trainwire";
import { readChunks, report, timed } from "./_measure.mjs";

const [path, roundsText] = process.argv.slice(2);
const rounds = Number(roundsText);

function decodeFile() {
  const decoder = new Decoder();
  let events = 0;
  readChunks(path, (chunk) => {
    for (const item of decoder.feed(chunk)) if (item.kind !== "diagnostic") events += 1;
  });
  return events;
}

function parseFile() {
  let events = 0;
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (line.trim() !== "") {
      JSON.parse(line);
      events += 1;
    }
  }
  return events;
}

const ours = [];
const baseline = [];
const lines = parseFile(); // also warms the page cache and the JIT
for (let round = 0; round < rounds; round++) {
  if (round % 2) baseline.push(timed(parseFile).seconds);
  const { seconds, result: events } = timed(decodeFile);
  ours.push(seconds);
  if (round % 2 === 0) baseline.push(timed(parseFile).seconds);
  if (events !== lines) throw new Error(`the decoder gave ${events} events for ${lines} valid lines`);
}
report({ ours, baseline, events: lines });
