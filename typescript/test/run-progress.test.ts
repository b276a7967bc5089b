// The dashboard's run view words trials, counted items and cycles as `trainwire tail` does.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { type RunState, StreamReader } from "trainwire";
import { runProgressParts } from "../dashboard/run-progress.js";
import { SUITE_DIR } from "./helpers.js";

/** The run of a golden case once its first `lines` lines are read, but for line `left` (from 1). */
function runAfter(id: string, lines: number, left = 0): Readonly<RunState> {
  const stream = readFileSync(path.join(SUITE_DIR, "cases", id, "stream.ndjson"), "utf8");
  const reader = new StreamReader();
  reader.feed(
    stream
      .split("\n")
      .slice(0, lines)
      .filter((_, index) => index + 1 !== left)
      .map((line) => `${line}\n`)
      .join(""),
  );
  const run = reader.toState().runs[0];
  assert.ok(run !== undefined);
  return run;
}

describe("the run view's progress parts", () => {
  it("say the running trial of a search, as tail's status line does", () => {
    assert.deepEqual(runProgressParts(runAfter("sweep-restart-in-trial", 9)), ["trial 2/3, best 1.2 (trial 1)"]);
  });

  it("say a phase's counted items with the ETA while the run runs, and the cycle", () => {
    assert.deepEqual(runProgressParts(runAfter("eval-items", 22)), ["predict 1,200/5,000 items, ETA 9.5s"]);
    assert.deepEqual(runProgressParts(runAfter("eval-items", 23)), []); // the phase ended
    // a run that ended with the phase still open (a writer that leaves it open): the count, no ETA
    assert.deepEqual(runProgressParts(runAfter("eval-items", 24, 23)), ["predict 1,200/5,000 items"]);
    assert.deepEqual(runProgressParts(runAfter("cycles", 4)), ["cycle 2 of 5"]);
  });

  it("add nothing for a run of contract 1.0", () => {
    assert.deepEqual(runProgressParts(runAfter("full-run", 1000)), []);
  });
});
