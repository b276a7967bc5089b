// Decoded lines to run state, following docs/reader-rules.md sections 2 (checks 7-9), 3 and 4.

import { toTimestampUs } from "./clock.js";
import type { DecodedLine } from "./decoder.js";
import { StreamError } from "./errors.js";
import { ENVELOPE_FIELDS } from "./generated/contract.js";
import { statusAt } from "./liveness.js";
import {
  evaluation,
  newTrials,
  trialEnded,
  trialEvaluated,
  trialProgress,
  trialStarted,
  trialWentBack,
} from "./trials.js";
import type { Diagnostic, Line, ReaderState, RunState, TrainStep, UnknownEvent } from "./types.js";
import { assertNever } from "./vocabulary.js";

/** The fields of `run.finished` that are not its payload. */
const NOT_PAYLOAD: ReadonlySet<string> = new Set(ENVELOPE_FIELDS);

/** The default number of diagnostics a reader lists; the others are counted in `diagnostics_dropped`. */
export const DEFAULT_MAX_DIAGNOSTICS = 1000;

export interface FoldOptions {
  /** Throw a `StreamError` at the first diagnostic instead of recording it. */
  strict?: boolean | undefined;
  /** List at most this many diagnostics (the first ones) and count the rest. Default 1000. */
  maxDiagnostics?: number | undefined;
  /**
   * Go on from a saved reader state: its runs (with their last `seq` and `ts`, so that
   * sequence gaps and liveness are still detected), unknown-event count and diagnostics.
   */
  resume?: ReaderState | undefined;
}

export interface StateOptions {
  /** The current time: with it, a silent `running` run may be reported `stale`. */
  now?: string | Date | undefined;
  /** With `now`: the silence (seconds) after which a run is stale, instead of 3 heartbeat intervals. */
  staleAfterS?: number | undefined;
}

/** The framing counters a `ReaderState` reports beside the runs. */
export interface FramingCounts {
  lines: number;
  consumedBytes: number;
  partialTailBytes: number;
}

/** Folds decoded lines into the state of each run, keyed by `run_id`. */
export class RunStateFold {
  readonly strict: boolean;
  readonly maxDiagnostics: number;
  /** The first diagnostics, up to `maxDiagnostics`: a stream of bad lines cannot exhaust memory. */
  readonly diagnostics: Diagnostic[] = [];
  #diagnosticsDropped = 0;
  #runs = new Map<string, RunState>(); // a Map keeps the order of first appearance
  // Frozen copies handed out by runs(): a run that did not change is not copied again.
  #copies = new Map<string, Readonly<RunState>>();
  // The copies of all runs in order, refreshed only where a run changed: runs() is a slice.
  #list: Readonly<RunState>[] = [];
  #position = new Map<string, number>();
  #changed = new Set<string>();
  #unknownEvents = 0;
  // The run the last event changed, already marked changed and without a copy: the lines
  // of one run mostly come together, and they skip the map and set lookups.
  #hot: RunState | undefined;

  constructor(options: FoldOptions = {}) {
    this.strict = options.strict ?? false;
    this.maxDiagnostics = options.maxDiagnostics ?? DEFAULT_MAX_DIAGNOSTICS;
    const resume = options.resume;
    if (resume !== undefined) {
      for (const saved of resume.runs) {
        // `stale` is decided when a state is read, never kept: the run was running.
        const run = { ...newRunFields(), ...structuredClone(saved) }; // a 1.0 reader's state lacks the 1.1 fields
        run.trials = { ...newTrials(), ...run.trials };
        if (run.status === "stale") run.status = "running";
        this.#runs.set(run.run_id, run);
        this.#changed.add(run.run_id);
      }
      this.#unknownEvents = resume.unknown_events;
      for (const diagnostic of resume.diagnostics) this.#keep({ ...diagnostic });
      this.#diagnosticsDropped += resume.diagnostics_dropped ?? 0;
    }
  }

  /** Diagnostics counted beyond `maxDiagnostics`. */
  get diagnosticsDropped(): number {
    return this.#diagnosticsDropped;
  }

  /** Lines applied whose event name this reader does not know. */
  get unknownEvents(): number {
    return this.#unknownEvents;
  }

  /** Apply one decoded line (or record its diagnostic); true when an event changed its run. */
  apply(item: DecodedLine): boolean {
    if (item.kind === "diagnostic") {
      this.#record(item.diagnostic);
      return false;
    }
    const event = item.event;
    const hot = this.#hot;
    const known = hot !== undefined && hot.run_id === event.run_id ? hot : this.#runs.get(event.run_id);
    if (known !== undefined && known.finished !== null) {
      this.#record({
        line: item.line,
        code: "after_finished",
        message: `run ${event.run_id} already finished; seq ${event.seq} dropped`,
      });
      return false;
    }
    const lastSeq = known?.last_seq ?? 0;
    if (event.seq <= lastSeq) {
      this.#record({
        line: item.line,
        code: "seq_not_increasing",
        message: `run ${event.run_id}: seq ${event.seq} after ${lastSeq}; line dropped`,
      });
      return false;
    }
    if (event.seq > lastSeq + 1) {
      this.#record({
        line: item.line,
        code: "seq_gap",
        message: `run ${event.run_id}: expected seq ${lastSeq + 1}, got ${event.seq}`,
      });
    }
    const run = known ?? this.#create(event.run_id);
    if (run !== hot) {
      this.#copies.delete(run.run_id);
      this.#changed.add(run.run_id);
      this.#hot = run;
    }
    if (event.seq > lastSeq + 1) run.seq_gaps.push([lastSeq + 1, event.seq]);
    run.events += 1;
    run.last_seq = event.seq;
    run.last_ts = event.ts;
    if (event.stage !== undefined) run.stage = event.stage;
    if (item.kind === "unknown") this.#unknownEvents += 1;
    else applyEvent(run, item.event);
    return true;
  }

  /**
   * The runs in order of first appearance, with liveness decided at `now`: frozen copies,
   * the same objects from call to call while a run does not change (cheap to call often,
   * and a UI can compare them by identity).
   */
  runs(options: StateOptions = {}): Readonly<RunState>[] {
    for (const runId of this.#changed) {
      let position = this.#position.get(runId);
      if (position === undefined) {
        position = this.#list.length;
        this.#position.set(runId, position);
      }
      this.#list[position] = this.#copyAt(runId, undefined, undefined) as Readonly<RunState>;
    }
    this.#changed.clear();
    this.#hot = undefined;
    if (options.now === undefined) return this.#list.slice();
    const now = toTimestampUs(options.now);
    return this.#list.map((copy) => this.#copyAt(copy.run_id, now, options.staleAfterS) as Readonly<RunState>);
  }

  /** One run by id (a frozen copy, as in `runs()`), or undefined. */
  run(runId: string, options: StateOptions = {}): Readonly<RunState> | undefined {
    const now = options.now === undefined ? undefined : toTimestampUs(options.now);
    return this.#copyAt(runId, now, options.staleAfterS);
  }

  /** The run whose first line came last (in a file holding several runs, the newest), or undefined. */
  latestRun(options: StateOptions = {}): Readonly<RunState> | undefined {
    let latest: string | undefined;
    for (const runId of this.#runs.keys()) latest = runId;
    return latest === undefined ? undefined : this.run(latest, options);
  }

  #copyAt(runId: string, now: number | undefined, staleAfterS: number | undefined): Readonly<RunState> | undefined {
    const run = this.#runs.get(runId);
    if (run === undefined) return undefined;
    let copy = this.#copies.get(runId);
    if (copy === undefined) {
      copy = deepFreeze(structuredClone(run));
      this.#copies.set(runId, copy);
      if (run === this.#hot) this.#hot = undefined;
    }
    const status = statusAt(run.status, run.last_ts, run.heartbeat_interval_s, now, staleAfterS);
    if (status !== run.status) return Object.freeze({ ...copy, status });
    return copy;
  }

  /** The whole reader state (schemas/reader-state/v1). */
  toState(framing: FramingCounts, options: StateOptions = {}): ReaderState {
    return {
      runs: structuredClone(this.runs(options)) as RunState[], // the caller's to change
      lines: framing.lines,
      consumed_bytes: framing.consumedBytes,
      partial_tail_bytes: framing.partialTailBytes,
      unknown_events: this.#unknownEvents,
      diagnostics: this.diagnostics.map((diagnostic) => ({ ...diagnostic })),
      // Only when some were dropped: a state within the limit is unchanged by the bound.
      ...(this.#diagnosticsDropped > 0 ? { diagnostics_dropped: this.#diagnosticsDropped } : {}),
    };
  }

  #record(diagnostic: Diagnostic): void {
    if (this.strict) throw new StreamError(diagnostic);
    this.#keep(diagnostic);
  }

  #keep(diagnostic: Diagnostic): void {
    if (this.diagnostics.length < this.maxDiagnostics) this.diagnostics.push(diagnostic);
    else this.#diagnosticsDropped += 1;
  }

  #create(runId: string): RunState {
    const run: RunState = {
      run_id: runId,
      status: "running",
      events: 0,
      last_seq: 0,
      last_ts: null,
      seq_gaps: [],
      heartbeat_interval_s: null,
      phase: null,
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
      trials: newTrials(),
      ...newRunFields(),
      stage: null,
      finished: null,
    };
    this.#runs.set(runId, run);
    return run;
  }
}

/** The per-event effects of reader-rules section 3. */
function applyEvent(run: RunState, event: Line): void {
  if (event.event === "train.step") {
    // Most lines of a stream: tested before the switch compares the names one by one.
    applyTrainStep(run, event);
    return;
  }
  switch (event.event) {
    case "run.started":
      run.total_steps = event.total_steps;
      run.trials.total = event.total_trials ?? null;
      if (event.heartbeat_interval_s !== undefined) run.heartbeat_interval_s = event.heartbeat_interval_s;
      break;
    case "run.heartbeat":
      break;
    case "phase.started":
      run.phase = event.phase;
      if (event.cycle !== undefined) {
        run.cycle = { phase: event.phase, cycle: event.cycle, total_cycles: event.total_cycles ?? null };
      }
      break;
    case "phase.ended":
      if (event.phase === run.phase) run.phase = null;
      if (run.phase_progress?.phase === event.phase) run.phase_progress = null;
      break;
    case "phase.progress":
      run.phase_progress = {
        phase: event.phase,
        done: event.done,
        total: event.total,
        unit: event.unit ?? null,
        eta_s: event.eta_s,
        trial: event.trial ?? null,
      };
      break;
    case "train.epoch":
      run.epoch = event.epoch;
      run.step = event.step;
      if (event.trial !== undefined) trialProgress(run.trials, event.trial, event.step, event.epoch);
      break;
    case "train.restarted":
      run.attempt = event.attempt;
      run.restarts.push({ reason: event.reason, previous_step: event.previous_step, step: event.step });
      run.step = event.step;
      run.eta_s = null;
      run.progress = null;
      if ("total_steps" in event) run.total_steps = event.total_steps ?? null;
      if (event.trial !== undefined) trialWentBack(run.trials, event.trial, event.step);
      break;
    case "train.rolled_back":
      // the attempt goes on: no new attempt, steps may go back (reader rule 3)
      run.rollbacks = run.rollbacks ?? [];
      run.rollbacks.push({
        previous_step: event.previous_step,
        step: event.step,
        checkpoint: event.checkpoint,
        reason: event.reason,
        trial: event.trial ?? null,
      });
      run.step = event.step;
      run.eta_s = null;
      run.progress = null;
      if (event.trial !== undefined) trialWentBack(run.trials, event.trial, event.step);
      break;
    case "eval.completed":
      run.last_eval = evaluation(event);
      if (event.trial !== undefined) trialEvaluated(run.trials, event.trial, event);
      break;
    case "checkpoint.saved":
      run.last_checkpoint = { step: event.step, path: event.path, reason: event.reason };
      break;
    case "trial.started":
      trialStarted(run.trials, event);
      break;
    case "trial.ended":
      trialEnded(run.trials, event);
      break;
    case "stop.requested":
      run.stop_requested = true;
      if (event.criterion !== undefined) run.stop_criterion = event.criterion;
      break;
    case "run.finished":
      run.status = event.status;
      run.finished = payloadOf(event);
      break;
    default:
      assertNever(event);
  }
}

function applyTrainStep(run: RunState, event: TrainStep): void {
  run.step = event.step;
  run.total_steps = event.total_steps;
  run.epoch = event.epoch;
  run.loss = event.loss;
  run.learning_rate = event.learning_rate;
  run.eta_s = event.eta_s;
  run.progress = event.progress;
  if (event.trial !== undefined) {
    trialProgress(run.trials, event.trial, event.step, event.epoch, {
      loss: event.loss,
      elapsed_s: event.elapsed_s,
      eta_s: event.eta_s,
    });
  }
}

/** The contract 1.1 fields of a run state, as they are before any line sets them. */
function newRunFields(): Pick<Required<RunState>, "phase_progress" | "cycle" | "rollbacks" | "stop_criterion"> {
  return { phase_progress: null, cycle: null, rollbacks: [], stop_criterion: null };
}

function payloadOf(event: Line | UnknownEvent): Record<string, unknown> {
  // defined, not assigned: a field named `__proto__` stays a field, as in Python
  return Object.fromEntries(Object.entries(event).filter(([key]) => !NOT_PAYLOAD.has(key)));
}

function deepFreeze<T>(value: T): Readonly<T> {
  if (value !== null && typeof value === "object") {
    for (const field of Object.values(value)) deepFreeze(field);
    Object.freeze(value);
  }
  return value;
}
