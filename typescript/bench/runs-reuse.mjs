// runs() on a reader holding RUNS runs, after a line for one of them, REPEATS times; the
// baseline copies every run, as runs() did before it reused the copies of unchanged runs.
// Usage: node --expose-gc bench/runs-reuse.mjs RUNS REPEATS
import { StreamReader } from "trainwire";
import { report, timed } from "./_measure.mjs";

const [runsText, repeatsText] = process.argv.slice(2);
const runs = Number(runsText);
const line = (runId, seq) =>
  `${JSON.stringify({
    schema_version: 1,
    seq,
    ts: "2026-11-29T10:00:00Z",
    run_id: runId,
    event: "train.step",
    step: seq,
    total_steps: null,
    epoch: null,
    loss: 1 / seq,
    learning_rate: null,
    elapsed_s: seq,
    eta_s: null,
    progress: null,
  })}\n`;

const reader = new StreamReader();
reader.feed(Array.from({ length: runs }, (_, index) => line(`run-${index}`, 1)).join(""));
reader.runs();
const ours = [];
const baseline = [];
for (let repeat = 0; repeat < Number(repeatsText); repeat++) {
  reader.feed(line("run-0", repeat + 2));
  ours.push(timed(() => reader.runs()).seconds);
  baseline.push(timed(() => reader.runs().map((run) => structuredClone(run))).seconds);
}
report({ ours, baseline });
