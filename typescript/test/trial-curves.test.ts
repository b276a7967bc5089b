// Which trials' loss curves the trials panel draws, and the note it writes under them.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MAX_DRAWN_TRIALS, pickTrials, type RankedTrial } from "../dashboard/trial-curves.js";
import { newRecord } from "../src/trials.js";
import type { Trial } from "../src/types.js";

function ranked(trial: number, status: Trial["status"], objective: number | null = null): RankedTrial {
  return { trial: { ...newRecord(trial), status }, objective };
}

function sorted(trials: Set<number>): number[] {
  return [...trials].sort((a, b) => a - b);
}

const everyCurve = new Set(Array.from({ length: 100 }, (_, index) => index + 1));

describe("the trials drawn", () => {
  it("are all of those with a curve when they fit, without a note", () => {
    const trials = [ranked(1, "succeeded", 0.5), ranked(2, "running"), ranked(3, "failed")];
    assert.deepEqual(pickTrials(trials, new Set([1, 2, 3]), null), { trials: new Set([1, 2, 3]), note: "" });
    assert.deepEqual(sorted(pickTrials(trials, new Set([1, 3]), null).trials), [1, 3]);
  });

  it("of many: the newest running ones and the lowest objectives when the search minimises", () => {
    // trials 1-20 ended with objective = trial / 10, 21-25 running
    const trials = [
      ...Array.from({ length: 20 }, (_, index) => ranked(index + 1, "succeeded", (index + 1) / 10)),
      ...Array.from({ length: 5 }, (_, index) => ranked(index + 21, "running")),
    ];
    const picked = pickTrials(trials, everyCurve, { value: 0.1, metric: "loss" });
    assert.deepEqual(sorted(picked.trials), [1, 2, 3, 4, 5, 23, 24, 25]);
    assert.equal(picked.note, "8 of 25 trials drawn: the best 5 by loss and the 3 running");
    assert.equal(picked.trials.size, MAX_DRAWN_TRIALS);
  });

  it("of many: the highest objectives when the best the search named is the highest", () => {
    const trials = Array.from({ length: 20 }, (_, index) => ranked(index + 1, "succeeded", (index + 1) / 10));
    const picked = pickTrials(trials, everyCurve, { value: 2.0, metric: "accuracy" });
    assert.deepEqual(sorted(picked.trials), [13, 14, 15, 16, 17, 18, 19, 20]);
    assert.equal(picked.note, "8 of 20 trials drawn: the best 8 by accuracy");
  });

  it("of many without a best: the latest ended, trials without an objective included", () => {
    const trials = Array.from({ length: 12 }, (_, index) => ranked(index + 1, index % 2 ? "pruned" : "failed"));
    const picked = pickTrials(trials, everyCurve, { value: null, metric: "loss" });
    assert.deepEqual(sorted(picked.trials), [5, 6, 7, 8, 9, 10, 11, 12]);
    assert.equal(picked.note, "8 of 12 trials drawn: the last 8 ended");
  });

  it("leave out trials without a curve before counting", () => {
    const trials = Array.from({ length: 12 }, (_, index) => ranked(index + 1, "succeeded", index));
    const picked = pickTrials(trials, new Set([2, 4, 6, 8, 10, 12]), { value: 0, metric: "loss" });
    assert.deepEqual(picked, { trials: new Set([2, 4, 6, 8, 10, 12]), note: "" });
  });
});
