// Every series name the writer accepts lands on a chart: line terminators of either regex
// engine included (the chart rules are compiled with the `s` flag, as Python reads them).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { chartOf } from "../src/charts.js";

const BREAKS = ["\n", "\r", "\u2028", "\u2029", "\u0085", "\u0000"];

describe("the chart of a series name", () => {
  it("takes a name with any line terminator, under the title Python gives it", () => {
    for (const character of BREAKS) {
      assert.equal(chartOf(`metrics/a${character}b`).title, `a${character}b`);
      assert.equal(chartOf(`a${character}b`).kind, "custom");
      assert.equal(chartOf(`eval/val${character}idation/accuracy`).title, "accuracy");
    }
    assert.equal(chartOf(`metrics/${"\n".repeat(256)}`).title, "\n".repeat(256));
    assert.equal(chartOf("metrics/\u{1f525}").title, "\u{1f525}");
  });

  it("matches `$` at the end of the name only, never before a final line feed", () => {
    assert.deepEqual(chartOf("loss\n"), { title: "loss\n", kind: "custom", smoothing: true, log_scale: false });
    assert.equal(chartOf("train_runtime\n").kind, "custom");
    assert.equal(chartOf("trial/3\n/loss").title, "loss per trial");
  });
});
