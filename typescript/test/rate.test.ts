// The page's steps per second: over the current attempt only.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { StreamReader } from "trainwire";
import { StepRate } from "../dashboard/rate.js";
import { known, ndjson } from "./helpers.js";

/** The rate after each line of `lines`, fed one at a time as the page's feed does. */
function ratesOf(...lines: Record<string, unknown>[]): (number | null)[] {
  const reader = new StreamReader();
  const rate = new StepRate();
  return lines.map((line) => {
    for (const item of reader.feed(ndjson(line))) rate.take(item);
    return rate.rate;
  });
}

describe("the step rate", () => {
  it("is steps over seconds since the attempt's first step, none before a second step", () => {
    const rates = ratesOf(
      known("run.started", 1),
      known("train.step", 2, { step: 10, elapsed_s: 5 }),
      known("train.step", 3, { step: 30, elapsed_s: 15 }),
      known("train.step", 4, { step: 70, elapsed_s: 25 }),
    );
    assert.deepEqual(rates, [null, null, 2, 3]);
  });

  it("starts again at a restart: the restored steps do not count", () => {
    const rates = ratesOf(
      known("run.started", 1),
      known("train.step", 2, { step: 1, elapsed_s: 1 }),
      known("train.step", 3, { step: 3, elapsed_s: 2 }),
      known("train.restarted", 4, {
        reason: "oom",
        attempt: 2,
        previous_step: 3,
        step: 2,
        batch_size_from: 8,
        batch_size_to: 4,
      }),
      known("train.step", 5, { step: 3, elapsed_s: 10 }),
      known("train.step", 6, { step: 4, elapsed_s: 14 }),
    );
    assert.deepEqual(rates, [null, null, 2, null, null, 0.25]);
  });

  it("keeps its last value at a step no later than the attempt's first (no division by zero)", () => {
    const rates = ratesOf(
      known("run.started", 1),
      known("train.step", 2, { step: 1, elapsed_s: 2 }),
      known("train.step", 3, { step: 5, elapsed_s: 4 }),
      known("train.step", 4, { step: 6, elapsed_s: 2 }),
      known("train.step", 5, { step: 7, elapsed_s: 1 }),
    );
    assert.deepEqual(rates, [null, null, 2, 2, 2]);
  });

  it("starts again with a new run in the stream", () => {
    const rates = ratesOf(
      known("run.started", 1),
      known("train.step", 2, { step: 1, elapsed_s: 1 }),
      known("train.step", 3, { step: 2, elapsed_s: 2 }),
      known("run.started", 1, {}, "r2"),
    );
    assert.deepEqual(rates, [null, null, 1, null]);
  });
});
