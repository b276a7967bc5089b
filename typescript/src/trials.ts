/**
 * A run's trials in the reader state (contract 1.1): one record per trial, the best with its
 * params. The Python fold (`trainwire.lines.trials`) does the same, field for field.
 */

import type { EvalCompleted, LastEval, Trial, TrialEnded, TrialStarted, Trials } from "./types.js";

/** The `trials` of a run no trial line reached. */
export function newTrials(): Required<Trials> {
  return { count: 0, best: null, total: null, list: [] };
}

/** The record of trial `trial` before any line said more of it than its number. */
export function newRecord(trial: number): Trial {
  return {
    trial,
    attempt: 1,
    baseline: false,
    status: "running",
    params: {},
    step: null,
    epoch: null,
    loss: null,
    elapsed_s: null,
    eta_s: null,
    metrics: {},
    duration_s: null,
    error: null,
    accepted: null,
    last_eval: null,
    previous_eval: null,
  };
}

/** The record of trial `trial`, made when a line of it comes before its `trial.started`. */
function recordOf(trials: Trials, trial: number): Trial {
  trials.count = Math.max(trials.count, trial);
  trials.list ??= [];
  for (let index = trials.list.length - 1; index >= 0; index -= 1) {
    const record = trials.list[index] as Trial; // the trial written to is nearly always the last one
    if (record.trial === trial) return record;
  }
  const record = newRecord(trial);
  trials.list.push(record);
  return record;
}

/** A (new attempt of a) trial: its record starts afresh. */
export function trialStarted(trials: Trials, event: TrialStarted): void {
  const record = recordOf(trials, event.trial);
  Object.assign(record, newRecord(event.trial), {
    attempt: event.attempt,
    baseline: event.baseline ?? false,
    params: { ...event.params },
  });
}

export function trialEnded(trials: Trials, event: TrialEnded): void {
  const record = recordOf(trials, event.trial);
  record.status = event.status;
  record.eta_s = null;
  record.metrics = { ...event.metrics };
  record.duration_s = event.duration_s;
  record.error = event.error === null ? null : { ...event.error };
  record.accepted = event.accepted ?? null;
  const best = event.best;
  if (best !== undefined) {
    const known = trials.list?.find((candidate) => candidate.trial === best.trial);
    trials.best = {
      trial: best.trial,
      metric: best.metric,
      value: best.value,
      params: known === undefined ? null : { ...known.params },
    };
  }
}

/** A `train.step` (step, epoch, loss, clock) or `train.epoch` (step, epoch) of a trial. */
export function trialProgress(
  trials: Trials,
  trial: number,
  step: number,
  epoch: number | null | undefined,
  clock?: { loss?: number | null; elapsed_s?: number | null; eta_s?: number | null },
): void {
  const record = recordOf(trials, trial);
  record.step = step;
  record.epoch = epoch ?? null;
  if (clock !== undefined) {
    record.loss = clock.loss ?? null;
    record.elapsed_s = clock.elapsed_s ?? null;
    record.eta_s = clock.eta_s ?? null;
  }
}

/** A `train.restarted` or `train.rolled_back` of a trial: its step, no estimate until the next step. */
export function trialWentBack(trials: Trials, trial: number, step: number): void {
  const record = recordOf(trials, trial);
  record.step = step;
  record.eta_s = null;
}

/** An `eval.completed` as the state keeps it (the run's `last_eval`, a trial's). */
export function evaluation(event: EvalCompleted): LastEval {
  return { step: event.step, epoch: event.epoch ?? null, split: event.split, metrics: { ...event.metrics } };
}

/** An `eval.completed` of a trial: its last evaluation, the one before kept beside it. */
export function trialEvaluated(trials: Trials, trial: number, event: EvalCompleted): void {
  const record = recordOf(trials, trial);
  record.previous_eval = record.last_eval ?? null;
  record.last_eval = evaluation(event);
}
