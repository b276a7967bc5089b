// docs/reader-rules.md sections 2 (checks 7-9), 3 and 4: runs, the fold, liveness.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type ReaderState, StreamReader, validateReaderState } from "trainwire";
import { known, line, ndjson } from "./helpers.js";

function read(text: string, options: Parameters<StreamReader["toState"]>[0] = {}): ReaderState {
  const reader = new StreamReader();
  reader.feed(text);
  const state = reader.toState(options);
  assert.ok(validateReaderState(state), JSON.stringify(validateReaderState.errors));
  return state;
}

const diagnostics = (state: ReaderState): [number, string][] => state.diagnostics.map((item) => [item.line, item.code]);

describe("the fold", () => {
  it("creates a run with the initial values on its first applied line", () => {
    const state = read(ndjson(known("phase.started", 1)));
    assert.deepEqual(state.runs[0], {
      run_id: "r1",
      status: "running",
      events: 1,
      last_seq: 1,
      last_ts: state.runs[0]?.last_ts,
      seq_gaps: [],
      heartbeat_interval_s: null,
      phase: "train",
      step: null,
      total_steps: null,
      epoch: null,
      loss: null,
      learning_rate: null,
      eta_s: null,
      progress: null,
      attempt: 1,
      restarts: [],
      stop_requested: false,
      last_eval: null,
      last_checkpoint: null,
      trials: { count: 0, best: null, total: null, list: [] },
      phase_progress: null,
      cycle: null,
      rollbacks: [],
      stop_criterion: null,
      stage: null,
      finished: null,
    });
  });

  it("applies each event's effect", () => {
    const stage = { name: "sft", index: 1, count: 2, x_note: "kept" };
    const state = read(
      ndjson(
        known("run.started", 1, { stage }),
        known("phase.started", 2),
        known("train.step", 3),
        line("train.restarted", 4, {
          reason: "oom",
          attempt: 2,
          previous_step: 5,
          step: 0,
          batch_size_from: 16,
          batch_size_to: 14,
          total_steps: 12,
        }),
        line("train.epoch", 5, { epoch: 1, step: 6, metrics: { loss: 1 } }),
        line("eval.completed", 6, { step: 6, epoch: 1, split: "eval", metrics: { acc: 0.5, bad: null } }),
        line("checkpoint.saved", 7, { step: 6, path: "checkpoint-6", reason: "periodic" }),
        line("trial.started", 8, { trial: 3, attempt: 1, params: { lr: 0.1 } }),
        line("trial.ended", 9, {
          trial: 2,
          attempt: 1,
          status: "succeeded",
          duration_s: 1,
          metrics: {},
          error: null,
          best: { trial: 2, metric: "acc", value: 0.9, x_extra: 1 },
        }),
        line("stop.requested", 10, { source: "api", signal: null, reason: "enough", requested_by: "me" }),
        known("phase.ended", 11, { phase: "other" }),
        line("run.heartbeat", 12, { phase: "train", step: 6 }),
      ),
    );
    const run = state.runs[0];
    assert.ok(run !== undefined);
    assert.deepEqual(run.stage, stage);
    assert.equal(run.heartbeat_interval_s, 5);
    assert.equal(run.phase, "train"); // phase.ended for another phase changes nothing
    assert.deepEqual([run.attempt, run.restarts], [2, [{ reason: "oom", previous_step: 5, step: 0 }]]);
    assert.deepEqual([run.step, run.epoch, run.total_steps, run.eta_s, run.progress], [6, 1, 12, null, null]);
    assert.deepEqual([run.loss, run.learning_rate], [2.25, 0.001]);
    assert.deepEqual(run.last_eval, { step: 6, epoch: 1, split: "eval", metrics: { acc: 0.5, bad: null } });
    assert.deepEqual(run.last_checkpoint, { step: 6, path: "checkpoint-6", reason: "periodic" });
    // trial 2 ended without its trial.started read: a record with no params, and the best has none
    assert.deepEqual(run.trials.best, { trial: 2, metric: "acc", value: 0.9, params: {} });
    assert.deepEqual(
      run.trials.list?.map((trial) => [trial.trial, trial.status, trial.params]),
      [
        [3, "running", { lr: 0.1 }],
        [2, "succeeded", {}],
      ],
    );
    assert.equal(run.trials.count, 3);
    assert.equal(run.stop_requested, true);
    assert.equal(run.events, 12);
  });

  it("goes on from a state a reader of contract 1.0 saved, with the 1.1 fields at their start", () => {
    const first = new StreamReader();
    first.feed(ndjson(known("run.started", 1)));
    const saved = first.toState();
    const old = saved.runs[0] as unknown as Record<string, unknown>;
    for (const name of ["phase_progress", "cycle", "rollbacks", "stop_criterion"]) delete old[name];
    old["trials"] = { count: 0, best: null };
    const reader = new StreamReader({ resume: saved });
    reader.feed(ndjson(line("train.rolled_back", 2, { previous_step: 6, step: 4, checkpoint: null, reason: null })));
    const run = reader.toState().runs[0];
    assert.deepEqual(run?.rollbacks, [{ previous_step: 6, step: 4, checkpoint: null, reason: null, trial: null }]);
    assert.deepEqual([run?.trials.list, run?.trials.total, run?.cycle, run?.attempt], [[], null, null, 1]);
  });

  it("keeps total_steps through a restart that does not give one, and closes the matching phase", () => {
    const state = read(
      ndjson(
        known("run.started", 1),
        known("phase.started", 2),
        line("train.restarted", 3, { reason: "other", attempt: 2, previous_step: 4, step: 4 }),
        known("phase.ended", 4),
      ),
    );
    assert.deepEqual([state.runs[0]?.total_steps, state.runs[0]?.phase, state.runs[0]?.step], [10, null, 4]);
  });

  it("ends a run with run.finished: status, and the payload without the envelope", () => {
    const state = read(
      ndjson(
        known("run.started", 1),
        known("run.finished", 2, { stage: { name: "s", index: 1, count: 1 }, x_note: "kept" }),
      ),
    );
    assert.equal(state.runs[0]?.status, "succeeded");
    assert.deepEqual(state.runs[0]?.finished, {
      status: "succeeded",
      exit_code: 0,
      error: null,
      reason: null,
      step: 10,
      checkpoint: null,
      duration_s: 3,
      metrics: {},
      artifacts: {},
      x_note: "kept",
    });
  });

  it("counts unknown events applied, and moves last_seq with them", () => {
    const state = read(ndjson(known("run.started", 1), line("model.exported", 2, { format: "onnx" })));
    assert.equal(state.unknown_events, 1);
    assert.deepEqual([state.runs[0]?.events, state.runs[0]?.last_seq], [2, 2]);
  });

  it("records a seq gap and applies the line; drops repeated seqs and lines after run.finished", () => {
    const state = read(
      ndjson(
        known("run.started", 1),
        known("phase.started", 4),
        known("phase.ended", 4),
        known("phase.ended", 2),
        known("run.finished", 5),
        known("phase.started", 6),
        line("model.exported", 7),
      ),
    );
    assert.deepEqual(diagnostics(state), [
      [2, "seq_gap"],
      [3, "seq_not_increasing"],
      [4, "seq_not_increasing"],
      [6, "after_finished"],
      [7, "after_finished"],
    ]);
    assert.deepEqual(state.runs[0]?.seq_gaps, [[2, 4]]);
    assert.deepEqual([state.runs[0]?.events, state.runs[0]?.phase, state.unknown_events], [3, "train", 0]);
  });

  it("keeps runs apart, in order of first appearance; a skipped line creates no run", () => {
    const state = read(
      ndjson(
        known("run.started", 1, {}, "b"),
        known("phase.started", 1, { phase: 5 }, "never"),
        known("run.started", 1, {}, "a"),
        known("phase.started", 2, {}, "b"),
        known("run.finished", 2, {}, "a"),
        known("phase.started", 3, { phase: "eval" }, "b"),
      ),
    );
    assert.deepEqual(
      state.runs.map((run) => [run.run_id, run.status, run.phase]),
      [
        ["b", "running", "eval"],
        ["a", "succeeded", null],
      ],
    );
    assert.deepEqual(diagnostics(state), [[2, "schema_violation"]]);
  });
});

describe("copies read between two lines of one run", () => {
  it("show the later line, whichever way the run was read", () => {
    const reader = new StreamReader();
    reader.feed(ndjson(known("run.started", 1), known("train.step", 2, { step: 1 })));
    assert.equal(reader.run("r1")?.step, 1);
    reader.feed(ndjson(known("train.step", 3, { step: 2 })));
    assert.equal(reader.run("r1")?.step, 2);
    assert.equal(reader.runs()[0]?.step, 2);
    reader.feed(ndjson(known("train.step", 4, { step: 3 })));
    assert.equal(reader.latestRun()?.step, 3);
    reader.feed(ndjson(known("train.step", 5, { step: 4 }), known("train.step", 6, { step: 5 })));
    assert.deepEqual([reader.runs()[0]?.step, reader.runs()[0]?.events], [5, 6]);
  });
});

describe("liveness", () => {
  const stream = ndjson(
    { ...known("run.started", 1), ts: "2026-11-29T10:00:00.000000Z" },
    { ...known("phase.started", 2), ts: "2026-11-29T10:00:10.000000Z" },
  );
  const statusAt = (now: string, staleAfterS?: number): string | undefined =>
    read(stream, staleAfterS === undefined ? { now } : { now, staleAfterS }).runs[0]?.status;

  it("is stale after more than three heartbeat intervals, compared to the microsecond", () => {
    assert.equal(statusAt("2026-11-29T10:00:25.000000Z"), "running"); // exactly 3 x 5 s
    assert.equal(statusAt("2026-11-29T10:00:25.000001Z"), "stale");
    assert.equal(statusAt("2026-11-29T10:00:25.0000009Z"), "running"); // beyond microseconds: truncated
    assert.equal(statusAt("2026-11-29T11:00:25.000001+01:00"), "stale");
  });

  it("uses the caller's timeout instead, and needs `now`", () => {
    assert.equal(statusAt("2026-11-29T10:00:11.000000Z", 0.5), "stale");
    assert.equal(statusAt("2026-11-29T10:00:11.000000Z", 1), "running");
    assert.equal(read(stream).runs[0]?.status, "running");
  });

  it("never makes a finished run stale, nor one with no interval and no timeout", () => {
    const finished = read(stream + ndjson({ ...known("run.finished", 3), ts: "2026-11-29T10:00:11.000000Z" }), {
      now: "2030-01-01T00:00:00Z",
    });
    assert.equal(finished.runs[0]?.status, "succeeded");
    const noInterval = read(ndjson(known("phase.started", 1)), { now: "2030-01-01T00:00:00Z" });
    assert.equal(noInterval.runs[0]?.status, "running");
  });

  it("decides staleness when the state is produced, not in the fold", () => {
    const reader = new StreamReader();
    reader.feed(stream);
    assert.equal(reader.toState({ now: "2030-01-01T00:00:00Z" }).runs[0]?.status, "stale");
    assert.equal(reader.toState().runs[0]?.status, "running");
  });
});

describe("bounded diagnostics", () => {
  it("lists the first maxDiagnostics and counts the rest, across a resume too", () => {
    const reader = new StreamReader({ maxDiagnostics: 3 });
    reader.feed(ndjson(known("run.started", 1), "bad", "bad"));
    const resumed = new StreamReader({
      maxDiagnostics: 3,
      resume: JSON.parse(JSON.stringify(reader.toState())) as ReaderState,
    });
    resumed.feed(ndjson("bad", "bad", known("run.started", 1)));
    const state = resumed.toState();
    assert.deepEqual(
      state.diagnostics.map((diagnostic) => diagnostic.line),
      [2, 3, 4],
    );
    assert.equal(state.diagnostics_dropped, 2);
    assert.ok(validateReaderState(state));
    const within = new StreamReader();
    within.feed(ndjson("bad"));
    assert.equal("diagnostics_dropped" in within.toState(), false);
  });
});
