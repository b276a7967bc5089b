// Decoded lines to run state, following docs/reader-rules.md sections 2 (checks 7-9), 3 and 4.
import type { DecodedLine } from "./decoder.js";
import { StreamError } from "./errors.js";
import { ENVELOPE_FIELDS } from "./generated/contract.js";
import { toEpochMicros } from "./time.js";
import type { Diagnostic, Line, ReaderState, RunState, UnknownEvent } from "./types.js";

/** The fields of `run.finished` that are not its payload. */
const NOT_PAYLOAD: ReadonlySet<string> = new Set(ENVELOPE_FIELDS);

export interface FoldOptions {
  /** Throw a `StreamError` at the first diagnostic instead of recording it. */
  strict?: boolean | undefined;
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
  readonly diagnostics: Diagnostic[] = [];
  #runs = new Map<string, RunState>(); // a Map keeps the order of first appearance
  #unknownEvents = 0;

  constructor(options: FoldOptions = {}) {
    this.strict = options.strict ?? false;
  }

  /** Lines applied whose event name this reader does not know. */
  get unknownEvents(): number {
    return this.#unknownEvents;
  }

  /** Apply one decoded line (or record its diagnostic). */
  apply(item: DecodedLine): void {
    if (item.kind === "diagnostic") {
      this.#record(item.diagnostic);
      return;
    }
    const event = item.event;
    const known = this.#runs.get(event.run_id);
    if (known !== undefined && known.finished !== null) {
      this.#record({ line: item.line, code: "after_finished", message: `run ${event.run_id} already finished; seq ${event.seq} dropped` });
      return;
    }
    const lastSeq = known?.last_seq ?? 0;
    if (event.seq <= lastSeq) {
      this.#record({ line: item.line, code: "seq_not_increasing", message: `run ${event.run_id}: seq ${event.seq} after ${lastSeq}; line dropped` });
      return;
    }
    if (event.seq > lastSeq + 1) {
      this.#record({ line: item.line, code: "seq_gap", message: `run ${event.run_id}: expected seq ${lastSeq + 1}, got ${event.seq}` });
    }
    const run = known ?? this.#create(event.run_id);
    if (event.seq > lastSeq + 1) run.seq_gaps.push([lastSeq + 1, event.seq]);
    run.events += 1;
    run.last_seq = event.seq;
    run.last_ts = event.ts;
    if (event.stage !== undefined) run.stage = event.stage;
    if (item.kind === "unknown") this.#unknownEvents += 1;
    else applyEvent(run, item.event);
  }

  /** The runs in order of first appearance, with liveness decided at `now`; copies. */
  runs(options: StateOptions = {}): RunState[] {
    const now = options.now === undefined ? undefined : toEpochMicros(options.now);
    return [...this.#runs.values()].map((run) => {
      const copy = structuredClone(run);
      if (now !== undefined && isStale(run, now, options.staleAfterS)) copy.status = "stale";
      return copy;
    });
  }

  /** The whole reader state (schemas/reader-state/v1). */
  toState(framing: FramingCounts, options: StateOptions = {}): ReaderState {
    return {
      runs: this.runs(options),
      lines: framing.lines,
      consumed_bytes: framing.consumedBytes,
      partial_tail_bytes: framing.partialTailBytes,
      unknown_events: this.#unknownEvents,
      diagnostics: this.diagnostics.map((diagnostic) => ({ ...diagnostic })),
    };
  }

  #record(diagnostic: Diagnostic): void {
    if (this.strict) throw new StreamError(diagnostic);
    this.diagnostics.push(diagnostic);
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
      trials: { count: 0, best: null },
      stage: null,
      finished: null,
    };
    this.#runs.set(runId, run);
    return run;
  }
}

/** The per-event effects of reader-rules section 3. */
function applyEvent(run: RunState, event: Line): void {
  switch (event.event) {
    case "run.started":
      run.total_steps = event.total_steps;
      if (event.heartbeat_interval_s !== undefined) run.heartbeat_interval_s = event.heartbeat_interval_s;
      break;
    case "run.heartbeat":
      break;
    case "phase.started":
      run.phase = event.phase;
      break;
    case "phase.ended":
      if (event.phase === run.phase) run.phase = null;
      break;
    case "train.step":
      run.step = event.step;
      run.total_steps = event.total_steps;
      run.epoch = event.epoch;
      run.loss = event.loss;
      run.learning_rate = event.learning_rate;
      run.eta_s = event.eta_s;
      run.progress = event.progress;
      break;
    case "train.epoch":
      run.epoch = event.epoch;
      run.step = event.step;
      break;
    case "train.restarted":
      run.attempt = event.attempt;
      run.restarts.push({ reason: event.reason, previous_step: event.previous_step, step: event.step });
      run.step = event.step;
      run.eta_s = null;
      run.progress = null;
      if ("total_steps" in event) run.total_steps = event.total_steps ?? null;
      break;
    case "eval.completed":
      run.last_eval = { step: event.step, epoch: event.epoch, split: event.split, metrics: event.metrics };
      break;
    case "checkpoint.saved":
      run.last_checkpoint = { step: event.step, path: event.path, reason: event.reason };
      break;
    case "trial.started":
      run.trials.count = Math.max(run.trials.count, event.trial);
      break;
    case "trial.ended":
      run.trials.count = Math.max(run.trials.count, event.trial);
      if (event.best !== undefined) {
        // The state's `best` is closed: its three fields, not the producer's extras.
        run.trials.best = { trial: event.best.trial, metric: event.best.metric, value: event.best.value };
      }
      break;
    case "stop.requested":
      run.stop_requested = true;
      break;
    case "run.finished":
      run.status = event.status;
      run.finished = payloadOf(event);
      break;
    default:
      assertNever(event);
  }
}

function payloadOf(event: Line | UnknownEvent): Record<string, unknown> {
  const payload: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(event)) if (!NOT_PAYLOAD.has(key)) payload[key] = value;
  return payload;
}

function isStale(run: RunState, nowMicros: number, staleAfterS: number | undefined): boolean {
  if (run.status !== "running" || run.last_ts === null) return false;
  const timeout = staleAfterS ?? (run.heartbeat_interval_s === null ? undefined : 3 * run.heartbeat_interval_s);
  if (timeout === undefined) return false;
  // Integer microseconds on both sides: the comparison every reader makes alike.
  return nowMicros - toEpochMicros(run.last_ts) > Math.round(timeout * 1e6);
}

function assertNever(value: never): never {
  throw new TypeError(`unhandled event ${JSON.stringify(value)}`);
}
