// A resumed run's chain, and the chain drawn as one run: no DOM, no worker.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { chainOf, joinedHistory, joinedSnapshot, MAX_CHAIN, type RunOrigin } from "../dashboard/lineage.js";
// the library's sources, as the page imports them: the chain takes their `RunSeries`
import { StreamReader } from "../src/index.js";
import type { RunSeries } from "../src/series.js";
import { known, ndjson } from "./helpers.js";

const fresh: RunOrigin = { resumed: false, from: null, step: null };

function resumedFrom(from: string | null, step: number | null = null): RunOrigin {
  return { resumed: true, from, step };
}

describe("a run's chain", () => {
  it("is the run alone when it resumed nothing", () => {
    assert.deepEqual(chainOf("b", new Map([["b", fresh]])), ["b"]);
    assert.deepEqual(chainOf("unknown", new Map([["b", fresh]])), ["unknown"]);
  });

  it("goes back through each run named, oldest first", () => {
    const origins = new Map([
      ["a", fresh],
      ["b", resumedFrom("a")],
      ["other", fresh],
      ["c", resumedFrom("b")],
    ]);
    assert.deepEqual(chainOf("c", origins), ["a", "b", "c"]);
  });

  it("takes the run started just before for a resume that names none", () => {
    const origins = new Map([
      ["a", fresh],
      ["b", resumedFrom(null)],
    ]);
    assert.deepEqual(chainOf("b", origins), ["a", "b"]);
    assert.deepEqual(chainOf("a", new Map([["a", resumedFrom(null)]])), ["a"]); // the first has none before it
  });

  it("stops at a run it does not know, one already in the chain, or a prototype's name", () => {
    assert.deepEqual(chainOf("b", new Map([["b", resumedFrom("gone")]])), ["b"]);
    const cycle = new Map([
      ["a", resumedFrom("b")],
      ["b", resumedFrom("a")],
    ]);
    assert.deepEqual(chainOf("b", cycle), ["a", "b"]);
    assert.deepEqual(chainOf("a", new Map([["a", resumedFrom("a")]])), ["a"]);
    for (const name of ["constructor", "__proto__", "toString"])
      assert.deepEqual(chainOf("b", new Map([["b", resumedFrom(name)]])), ["b"]);
  });

  it(`is at most ${MAX_CHAIN} runs, the latest ones`, () => {
    const origins = new Map<string, RunOrigin>([["r0", fresh]]);
    for (let index = 1; index < 200; index += 1) origins.set(`r${index}`, resumedFrom(`r${index - 1}`));
    const chain = chainOf("r199", origins);
    assert.equal(chain.length, MAX_CHAIN);
    assert.deepEqual([chain[0], chain.at(-1)], [`r${200 - MAX_CHAIN}`, "r199"]);
  });
});

/** Two runs of one stream: `a` steps 1-4 with a restart after step 2, then `b` resumed at step 3 for steps 4-6. */
function resumedPair(): { a: RunSeries; b: RunSeries } {
  const reader = new StreamReader({ series: {} });
  reader.feed(
    ndjson(
      known("run.started", 1, {}, "a"),
      known("train.step", 2, { step: 1, loss: 4 }, "a"),
      known("train.step", 3, { step: 2, loss: 3 }, "a"),
      known(
        "train.restarted",
        4,
        { reason: "oom", attempt: 2, previous_step: 2, step: 1, batch_size_from: 8, batch_size_to: 4 },
        "a",
      ),
      known("train.step", 5, { step: 2, loss: 2.5 }, "a"),
      known("train.step", 6, { step: 3, loss: 2 }, "a"),
      known("run.started", 1, { resumed_from: { run_id: "a", checkpoint: "ckpt-3", step: 3 } }, "b"),
      known("train.step", 2, { step: 4, loss: 1.5 }, "b"),
      known("train.step", 3, { step: 5, loss: 1 }, "b"),
    ),
  );
  const a = reader.series?.run("a");
  const b = reader.series?.run("b");
  assert.ok(a !== undefined && b !== undefined);
  return { a, b };
}

describe("a chain drawn as one run", () => {
  const origins = new Map([
    ["a", fresh],
    ["b", resumedFrom("a", 3)],
  ]);

  it("follows each run's attempts with the next run's, the resume a restart marked where it resumed", () => {
    const { a, b } = resumedPair();
    const joined = joinedSnapshot([a, b], origins);
    assert.equal(joined.run_id, "b");
    assert.equal(joined.attempt, 3); // a's two attempts, then b's one
    assert.deepEqual(joined.restarts, [
      [2, 1],
      [3, 3],
    ]);
    const resume = joined.markers.filter((marker) => marker.label === "resumed from a");
    assert.deepEqual(
      resume.map(({ kind, step, attempt }) => [kind, step, attempt]),
      [["restart", 3, 3]],
    );
    const loss = joined.series["loss"];
    assert.ok(loss !== undefined);
    assert.equal(loss.count, 6);
  });

  it("gives the points of every run in order, each at its attempt", () => {
    const { a, b } = resumedPair();
    const points = joinedHistory([a, b], origins).series("loss")?.points();
    assert.deepEqual(
      points?.map(([attempt, step, value]) => [attempt, step, value]),
      [
        [1, 1, 4],
        [1, 2, 3],
        [2, 2, 2.5],
        [2, 3, 2],
        [3, 4, 1.5],
        [3, 5, 1],
      ],
    );
  });

  it("marks a resume without a step at the resumed run's first step", () => {
    const { a, b } = resumedPair();
    const joined = joinedSnapshot([a, b], new Map([["b", resumedFrom("a")]]));
    assert.deepEqual(joined.restarts.at(-1), [3, 4]);
  });

  it("of one run is that run", () => {
    const { a } = resumedPair();
    const joined = joinedSnapshot([a], origins);
    assert.deepEqual(joined.restarts, a.toJSON().restarts);
    assert.equal(joined.series["loss"]?.count, 4);
  });

  it("needs at least one run", () => {
    assert.throws(() => joinedSnapshot([], origins), /at least one run/);
  });
});
