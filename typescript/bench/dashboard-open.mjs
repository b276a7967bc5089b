// What the dashboard does to open a run (fold + bounded series + chart data for every series)
// vs the fold alone, on the same stream. Usage: node --expose-gc bench/dashboard-open.mjs STREAM ROUNDS
import { StreamReader } from "trainwire";
import { readChunks, report, timed } from "./_measure.mjs";

const [path, roundsText] = process.argv.slice(2);
const rounds = Number(roundsText);

function open() {
  const reader = new StreamReader({ series: true });
  readChunks(path, (chunk) => reader.feed(chunk));
  const run = reader.latestRun();
  const series = reader.series.run(run.run_id);
  let points = 0;
  for (const name of series.names()) points += series.uplot(name)[0].length;
  return points;
}

function fold() {
  const reader = new StreamReader();
  readChunks(path, (chunk) => reader.feed(chunk));
  return reader.latestRun()?.events ?? 0;
}

const ours = [];
const baseline = [];
let points = 0;
fold(); // warms the page cache and the JIT
for (let round = 0; round < rounds; round++) {
  if (round % 2) baseline.push(timed(fold).seconds);
  const { seconds, result } = timed(open);
  ours.push(seconds);
  points = result;
  if (round % 2 === 0) baseline.push(timed(fold).seconds);
}
report({ ours, baseline, points });
