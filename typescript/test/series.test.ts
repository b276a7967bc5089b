// The series store: bounded downsampling that keeps the extremes, restarts as gaps, markers, snapshots.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { canonicalStringify, SeriesStore, StreamReader } from "trainwire";
import { known, line, ndjson } from "./helpers.js";

/** A run of `steps` train.step lines with a noisy falling loss; returns the NDJSON. */
function longRun(steps: number): string {
  const lines: string[] = [JSON.stringify(known("run.started", 1, { total_steps: steps }))];
  for (let step = 1; step <= steps; step += 1) {
    const loss = 10 / step + ((step * 7919) % 13) / 100;
    lines.push(JSON.stringify(known("train.step", step + 1, { step, total_steps: steps, loss, learning_rate: 0.001 })));
  }
  return `${lines.join("\n")}\n`;
}

describe("SeriesStore", () => {
  it("keeps a long run within maxPoints, with its first, last, lowest and highest points", () => {
    const steps = 200_000;
    const reader = new StreamReader({ series: { maxPoints: 400 } });
    reader.feed(longRun(steps));
    const loss = reader.series?.run("r1")?.series("loss");
    assert.ok(loss !== undefined);
    assert.equal(loss.count, steps);
    const points = loss.points();
    assert.ok(points.length <= 400 && points.length > 200, String(points.length));
    const values = Array.from({ length: steps }, (_, index) => 10 / (index + 1) + (((index + 1) * 7919) % 13) / 100);
    assert.deepEqual(points[0]?.slice(1, 3), [1, values[0]]);
    assert.deepEqual(points.at(-1)?.slice(1, 3), [steps, values.at(-1)]);
    assert.equal(
      Math.min(...points.map((point) => point[2])),
      values.reduce((a, b) => Math.min(a, b)),
    );
    assert.equal(
      Math.max(...points.map((point) => point[2])),
      values.reduce((a, b) => Math.max(a, b)),
    );
    const stepsKept = points.map((point) => point[1]);
    assert.deepEqual(
      stepsKept,
      [...stepsKept].sort((a, b) => a - b),
      "points stay in step order",
    );
  });

  it("breaks the uPlot line at a restart instead of drawing it back in time, and records markers", () => {
    const reader = new StreamReader({ series: true });
    reader.feed(
      ndjson(
        known("run.started", 1),
        ...[1, 2, 3, 4].map((step, index) => known("train.step", index + 2, { step, loss: 5 - step })),
        line("checkpoint.saved", 6, { step: 2, path: "ckpt/2", reason: "periodic" }),
        line("train.restarted", 7, { reason: "oom", attempt: 2, previous_step: 4, step: 2 }),
        ...[3, 4, 5].map((step, index) => known("train.step", index + 8, { step, loss: 1 / step })),
        line("eval.completed", 11, {
          step: 5,
          epoch: null,
          split: "validation",
          metrics: { accuracy: 0.75, loss: 0.5, perplexity: null },
        }),
        line("stop.requested", 12, { source: "api", signal: null, reason: null, requested_by: null }),
        known("run.finished", 13, { status: "interrupted", step: 5 }),
      ),
    );
    const run = reader.series?.run("r1");
    assert.ok(run !== undefined);
    const [x, y] = run.uplot("loss");
    assert.deepEqual(x, [1, 2, 3, 4, 5]);
    assert.deepEqual(y, [4, null, 1 / 3, 1 / 4, 1 / 5]);
    assert.deepEqual(run.uplot("eval/validation/accuracy"), [[5], [0.75]]);
    assert.deepEqual(run.names(), ["loss", "learning_rate", "eval/validation/accuracy", "eval/validation/loss"]);
    assert.deepEqual(
      run.markers().map((marker) => [marker.kind, marker.step, marker.attempt, marker.label]),
      [
        ["checkpoint", 2, 1, "periodic"],
        ["restart", 2, 2, "oom"],
        ["eval", 5, 2, "validation"],
        ["stop", 5, 2, "api"],
        ["finished", 5, 2, "interrupted"],
      ],
    );
  });

  it("gives the same snapshot after a JSON round trip as without one", () => {
    const text = longRun(5000);
    const half = text.indexOf("\n", text.length / 2) + 1;
    const whole = new StreamReader({ series: { maxPoints: 64 } });
    whole.feed(text);
    const first = new StreamReader({ series: { maxPoints: 64 } });
    first.feed(text.slice(0, half));
    const restored = SeriesStore.fromJSON(JSON.parse(JSON.stringify(first.series)));
    const second = new StreamReader({ resume: first.toState() });
    for (const item of second.feed(text.slice(half))) if (item.kind === "event") restored.add(item.event);
    assert.equal(canonicalStringify(restored.toJSON()), canonicalStringify(whole.series?.toJSON()));
  });

  it("keeps the order of first value through a canonical snapshot, whose keys are sorted", () => {
    const whole = new StreamReader({ series: { maxPoints: 64 } });
    whole.feed(longRun(3000));
    const restored = SeriesStore.fromJSON(JSON.parse(canonicalStringify(whole.series?.toJSON())));
    // sorted, learning_rate would come before loss
    assert.deepEqual(restored.run("r1")?.names(), ["loss", "learning_rate"]);
    assert.deepEqual(restored.run("r1")?.names(), whole.series?.run("r1")?.names());
  });

  it("bounds eval and checkpoint markers and counts the rest", () => {
    const store = new SeriesStore({ maxMarkers: 2 });
    for (let step = 1; step <= 5; step += 1)
      store.add(line("checkpoint.saved", step, { step, path: "c", reason: "periodic" }) as never);
    assert.equal(store.run("r1")?.markers().length, 2);
    assert.equal(store.run("r1")?.droppedMarkers, 3);
  });
});
