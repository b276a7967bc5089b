// The run view's decisions (badge, progress, stop button, phases, notes), from reader states
// of real streams: no DOM, no server.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type RunState, StreamReader } from "trainwire";
import {
  chainText,
  phaseText,
  resumeCheckpointText,
  runDuration,
  runErrorText,
  runHeaderView,
  runTitle,
  stopOutcomeText,
  stopPrompt,
} from "../dashboard/run-view.js";
import { known, line, ndjson } from "./helpers.js";

/** The one run of `lines`, its staleness decided at `now`. */
function stateOf(lines: Record<string, unknown>[], now?: string): Readonly<RunState> {
  const reader = new StreamReader();
  reader.feed(ndjson(...lines));
  const run = reader.toState(now === undefined ? {} : { now }).runs[0];
  assert.ok(run !== undefined);
  return run;
}

const started = known("run.started", 1);
const startedAt = Date.parse(started["ts"] as string);
const running = [started, known("phase.started", 2), known("train.step", 3)];

describe("the run header", () => {
  it("shows a running run's badge, bar, step, rate, ETA, loss and duration, with a stop button", () => {
    const view = runHeaderView({
      state: stateOf(running),
      rate: 2.5,
      startedAt,
      now: startedAt + 65_000,
      readOnly: false,
    });
    assert.deepEqual(view.badge, { text: "running", className: "badge running" });
    assert.equal(view.barWidth, "50%");
    assert.equal(view.step, "5");
    assert.equal(view.progressText, "step 5 / 10 · 2.5 steps/s · ETA 2.0s · loss 2.250 · duration 1:05");
    assert.equal(view.stopHidden, false);
  });

  it("shows the server's verdict of a run its host proved dead: stale at once, its duration stopped", () => {
    const state = stateOf(running); // the page's own fold, without a clock: still running
    const verdict = {
      verdict_version: 1 as const,
      run_id: state.run_id,
      status: "stale" as const,
      liveness: "gone" as const,
      judged_at: "2026-12-07T10:05:00.000000Z",
      exit_code: null,
      reason: null,
      step: 5,
      started_at: started["ts"] as string,
      ended_at: started["ts"] as string,
      ended_by: "last_line" as const,
      duration_s: 5.2,
      best: {},
      checkpoint: null,
      params: null,
      completeness: null,
    };
    const view = runHeaderView({ state, rate: null, startedAt, now: startedAt + 600_000, readOnly: false, verdict });
    assert.deepEqual(view.badge, { text: "stale (process gone)", className: "badge stale" });
    assert.ok(view.progressText.includes("duration 5.2s"), view.progressText); // not 10 minutes and growing
    assert.equal(view.stopHidden, true);
    const other = runHeaderView({
      state,
      rate: null,
      startedAt,
      now: startedAt,
      readOnly: false,
      verdict: { ...verdict, run_id: "another" },
    });
    assert.equal(other.badge.text, "running"); // a verdict of another run changes nothing
    const saved = runHeaderView({
      state,
      rate: null,
      startedAt,
      now: startedAt,
      readOnly: false,
      verdict: { ...verdict, checkpoint: { path: "ckpt-4", source: "checkpoint.saved" } },
    });
    assert.ok(saved.progressText.includes(" · checkpoint ckpt-4 (last saved)"), saved.progressText);
  });

  it("shows the ending the server's journal kept when the stream lost it: status, step, loss", () => {
    const state = stateOf(running, "2026-12-07T23:00:00.000000Z"); // the page's fold: stale at step 5
    const verdict = {
      verdict_version: 1 as const,
      run_id: state.run_id,
      status: "succeeded" as const,
      liveness: "gone" as const,
      judged_at: "2026-12-07T23:00:00.000000Z",
      exit_code: 0,
      reason: null,
      step: 8,
      started_at: started["ts"] as string,
      ended_at: started["ts"] as string,
      ended_by: "run.finished" as const,
      duration_s: 0.4,
      best: {},
      checkpoint: { path: "ckpt/final", source: "run.finished" as const },
      params: null,
      completeness: {
        stream_lines: 43,
        stream_lines_lost: 31,
        steps_logged: 8,
        kept_steps_lost: 0,
        reason: "disk full",
      },
    };
    const view = runHeaderView({ state, rate: null, startedAt, now: startedAt, readOnly: false, verdict });
    assert.deepEqual(view.badge, {
      text: "succeeded, stream incomplete: 31 of 43 lines lost",
      className: "badge succeeded",
    });
    assert.equal(view.step, "8");
    assert.equal(view.progressText, "step 8 / 10 · loss 2.250 · duration 0.4s · checkpoint ckpt/final");
  });

  it("offers no stop on a read-only server, nor once a stop is requested", () => {
    const state = stateOf(running);
    assert.equal(runHeaderView({ state, rate: null, startedAt, now: startedAt, readOnly: true }).stopHidden, true);
    const stopping = stateOf([
      ...running,
      line("stop.requested", 4, { source: "api", signal: null, reason: "enough", requested_by: "me" }),
    ]);
    assert.equal(
      runHeaderView({ state: stopping, rate: null, startedAt, now: startedAt, readOnly: false }).stopHidden,
      true,
    );
  });

  it("shows a finished run's own duration and ending, without ETA or stop", () => {
    const state = stateOf([...running, known("run.finished", 4)]);
    const view = runHeaderView({ state, rate: null, startedAt, now: startedAt + 3_600_000, readOnly: false });
    assert.deepEqual(view.badge, { text: "succeeded", className: "badge succeeded" });
    assert.equal(view.progressText, "step 5 / 10 · loss 2.250 · duration 3.0s · succeeded");
    assert.equal(view.barWidth, "50%"); // the bar is the run's last progress, not its ending
    assert.equal(view.stopHidden, true);
    const stopped = stateOf([
      ...running,
      known("run.finished", 4, { status: "interrupted", reason: "api", exit_code: 130 }),
    ]);
    assert.match(
      runHeaderView({ state: stopped, rate: null, startedAt, now: 0, readOnly: false }).progressText,
      / · interrupted \(api\)$/,
    );
  });

  it("names the checkpoint to resume from, else the last one saved, labelled so", () => {
    const saved = line("checkpoint.saved", 4, { step: 4, path: "ckpt-4", reason: "periodic" });
    const stoppedWithout = stateOf([
      ...running,
      saved,
      known("run.finished", 5, { status: "interrupted", reason: "sigterm", exit_code: 2, checkpoint: null }),
    ]);
    assert.equal(resumeCheckpointText(stoppedWithout), "checkpoint ckpt-4 (last saved)"); // as the verdict says it
    assert.match(
      runHeaderView({ state: stoppedWithout, rate: null, startedAt, now: 0, readOnly: false }).progressText,
      / · interrupted \(sigterm\) · checkpoint ckpt-4 \(last saved\)$/,
    );
    const stoppedWith = stateOf([
      ...running,
      saved,
      known("run.finished", 5, { status: "interrupted", reason: "sigterm", exit_code: 2, checkpoint: "ckpt-5" }),
    ]);
    assert.equal(resumeCheckpointText(stoppedWith), "checkpoint ckpt-5");
    assert.equal(resumeCheckpointText(stateOf(running)), null);
  });

  it("words a status of two words with a space, keeping the class as the status", () => {
    const state = stateOf([...running, known("run.finished", 4, { status: "awaiting_approval", exit_code: 4 })]);
    const view = runHeaderView({ state, rate: null, startedAt, now: startedAt, readOnly: false });
    assert.deepEqual(view.badge, { text: "awaiting approval", className: "badge awaiting_approval" });
  });

  it("shows a stale run as ended at its last line: duration stops there, no ETA, no stop", () => {
    const state = stateOf(running, "2026-12-01T00:00:00Z");
    assert.equal(state.status, "stale");
    const view = runHeaderView({
      state,
      rate: null,
      startedAt,
      now: Date.parse("2026-12-01T00:00:00Z"),
      readOnly: false,
    });
    assert.equal(view.badge.className, "badge stale");
    assert.equal(view.stopHidden, true);
    assert.doesNotMatch(view.progressText, /ETA/);
    assert.match(view.progressText, /silent since .+: shown as ended at its last line$/);
    const lastLine = Date.parse(state.last_ts ?? "");
    assert.equal(runDuration(state, startedAt, Date.parse("2026-12-01T00:00:00Z")), (lastLine - startedAt) / 1000);
  });

  it("shows missing values as `–` and an empty bar, never `NaN` or `null`", () => {
    const state = stateOf([known("run.started", 1, { total_steps: null })]);
    const view = runHeaderView({ state, rate: null, startedAt: null, now: startedAt, readOnly: false });
    assert.equal(view.barWidth, "0%");
    assert.equal(view.step, "");
    assert.equal(view.progressText, "step – · duration –");
  });

  it("escapes control characters in what the stream wrote", () => {
    assert.equal(runTitle("r\u0007", "dir/run"), "r\\x07  (dir/run)");
    assert.equal(runTitle("r1", "dir/run", "bert sweep"), "bert sweep  r1  (dir/run)");
  });
});

describe("the run view's lines", () => {
  it("say an open phase is running only while the run is", () => {
    const open = { name: "train", status: null, duration: null };
    assert.equal(phaseText(open, "running"), "train: running");
    assert.equal(phaseText(open, "stale"), "train: unfinished");
    assert.equal(phaseText(open, null), "train: unfinished");
    assert.equal(phaseText({ name: "eval", status: "ok", duration: 90 }, "running"), "eval: ok, 1:30");
  });

  it("name a resumed run's processes, and nothing for a run of one", () => {
    assert.equal(chainText(["a"]), "");
    assert.equal(chainText(["a", "b"]), "one curve across 2 processes: a → b");
  });

  it("word a failed run's error", () => {
    assert.equal(runErrorText("failed", { type: "ValueError", message: "bad" }), "failed: ValueError: bad");
  });

  it("ask and answer a stop differently for a search, which ends after its running trials", () => {
    assert.match(stopPrompt(false), /^Stop this run\? It saves a checkpoint/);
    assert.equal(
      stopPrompt(false, ["control_file", "sigterm", "api"]),
      "Stop this run? It saves a checkpoint and ends interrupted.\nReason:",
    );
    assert.match(
      stopPrompt(false, ["sigterm"]),
      /does not listen to the control file \(it listens to: sigterm\): the stop will stay pending/,
    );
    assert.match(
      stopPrompt(false, null),
      /does not say that it listens to the control file: the stop may stay pending/,
    );
    assert.match(stopPrompt(true), /^Stop this search\? It ends after its running trials/);
    assert.equal(stopOutcomeText(false, true, ""), "stop requested: the run saves a checkpoint and ends");
    assert.equal(stopOutcomeText(true, true, ""), "stop requested: the search ends after its running trials");
    assert.equal(stopOutcomeText(true, false, "read-only"), "stop refused: read-only");
  });
});
