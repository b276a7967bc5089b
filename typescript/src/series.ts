// Step-indexed history of each run for charts, bounded by downsampling. Browser-safe.
// The Python twin (trainwire.reader.series) gives the same snapshot for the same events.
// Series names: the `train.step` fields of STEP_SERIES by their own names, each value of a
// step's `metrics` as `metrics/<name>`, each evaluation metric as `eval/<split>/<metric>`; the
// loss of a step that carries `trial` also as `trial/<n>/loss` (one series per trial, beside the
// run's `loss`, which keeps every step as the run state's `loss` does).
import { toTimestampUs } from "./clock.js";
import type {
  Line,
  RunSeriesSnapshot,
  SeriesMarker,
  SeriesSnapshot,
  SeriesStoreSnapshot,
  UnknownEvent,
} from "./types.js";
import { assertNever, isKnownEvent } from "./vocabulary.js";

/** The default number of points one series keeps at most. */
export const DEFAULT_MAX_POINTS = 4000;
/** The default number of `eval` and `checkpoint` markers a run keeps (the others are counted). */
export const DEFAULT_MAX_MARKERS = 1000;
/** The `train.step` fields kept as series of their own name (the epoch and progress fields are the axes' business). */
export const STEP_SERIES = [
  "loss",
  "learning_rate",
  "grad_norm",
  "samples_per_s",
  "tokens_per_s",
  "tokens_seen",
] as const;

export interface SeriesOptions {
  /** The most points a series keeps; beyond it, buckets of points keep first, min, max and last. Default 4000. */
  maxPoints?: number | undefined;
  /** The most `eval` and `checkpoint` markers a run keeps. Default 1000. */
  maxMarkers?: number | undefined;
}

/**
 * A point as stored: [arrival index, step, value, time]. The index orders the points of a bucket;
 * the time (microseconds since the epoch, the line's `ts`) places it on a wall-clock axis.
 */
export type SeriesPoint = [index: number, step: number, value: number, timeUs: number];

/** A bucket of consecutive points of one attempt: [attempt, count, first, min, max, last]. */
export type SeriesBucket = [
  attempt: number,
  count: number,
  first: SeriesPoint,
  min: SeriesPoint,
  max: SeriesPoint,
  last: SeriesPoint,
];

// A store's snapshot (`toJSON()`, a journal's `store`, an opening's `series`) is the shape
// schemas/series/ states: the types are generated from it.
export type { RunSeriesSnapshot, SeriesMarker, SeriesSnapshot, SeriesStoreSnapshot };

export type MarkerKind = SeriesMarker["kind"];

/** A run snapshot's series with their names (the generated map type lets a key be missing, never a value). */
export function namedSeries(snapshot: RunSeriesSnapshot): [name: string, series: SeriesSnapshot][] {
  return Object.entries(snapshot.series) as [string, SeriesSnapshot][];
}

/** uPlot's data for one series: x = steps (ascending), y = values, `null` where a restart breaks the line. */
export type UPlotSeries = [x: number[], y: (number | null)[]];

/** One series as steps (ascending), values (`null` where a restart breaks the line) and times in seconds since the epoch. */
export type SeriesCurve = [steps: number[], values: (number | null)[], times: number[]];

/** One step-indexed series, downsampled by merging pairs of buckets whenever it outgrows its limit. */
export class Series {
  readonly maxBuckets: number;
  #bucketSize: number;
  #count: number;
  #buckets: SeriesBucket[];

  constructor(maxPoints: number, snapshot?: SeriesSnapshot) {
    // A bucket shows at most 4 points (first, min, max, last).
    this.maxBuckets = Math.max(1, Math.floor(maxPoints / 4));
    this.#bucketSize = snapshot?.bucket_size ?? 1;
    this.#count = snapshot?.count ?? 0;
    this.#buckets = structuredClone(snapshot?.buckets ?? []);
  }

  /** Points added in total, before downsampling. */
  get count(): number {
    return this.#count;
  }

  add(attempt: number, step: number, value: number, timeUs: number): void {
    const point: SeriesPoint = [this.#count, step, value, timeUs];
    this.#count += 1;
    const open = this.#buckets.at(-1);
    if (open !== undefined && open[0] === attempt && open[1] < this.#bucketSize) {
      mergeInto(open, [attempt, 1, point, point, point, point]);
    } else {
      this.#buckets.push([attempt, 1, point, point, point, point]);
    }
    while (this.#buckets.length > this.maxBuckets && this.#compact());
  }

  /** The kept points in arrival order, as [attempt, step, value, time in microseconds]. */
  points(): [attempt: number, step: number, value: number, timeUs: number][] {
    const out: [number, number, number, number][] = [];
    for (const [attempt, , ...kept] of this.#buckets) {
      let previous = -1;
      for (const [index, step, value, timeUs] of [...kept].sort((a, b) => a[0] - b[0])) {
        if (index === previous) continue; // one point can be first, min, max and last at once
        previous = index;
        out.push([attempt, step, value, timeUs]);
      }
    }
    return out;
  }

  toJSON(): SeriesSnapshot {
    return { bucket_size: this.#bucketSize, count: this.#count, buckets: structuredClone(this.#buckets) };
  }

  /** Doubles the bucket size and merges neighbours of one attempt that fit; false if none did. */
  #compact(): boolean {
    this.#bucketSize *= 2;
    const merged: SeriesBucket[] = [];
    for (const bucket of this.#buckets) {
      const previous = merged.at(-1);
      if (previous !== undefined && previous[0] === bucket[0] && previous[1] + bucket[1] <= this.#bucketSize)
        mergeInto(previous, bucket);
      else merged.push(bucket);
    }
    const shrunk = merged.length < this.#buckets.length;
    this.#buckets = merged;
    return shrunk;
  }
}

function mergeInto(into: SeriesBucket, from: SeriesBucket): void {
  into[1] += from[1];
  // Strict comparisons: on a tie the earlier point stays, in every language alike.
  if (from[3][2] < into[3][2]) into[3] = from[3];
  if (from[4][2] > into[4][2]) into[4] = from[4];
  into[5] = from[5];
}

/** A sweep keeps the loss curves of its first this many trials (the run's `loss` keeps every step). */
export const MAX_TRIAL_CURVES = 256;
const TRIAL_PREFIX = "trial/";

/** Many trial curves share one chart: each keeps a sixteenth of a series' points. */
function maxPointsOf(name: string, maxPoints: number): number {
  return name.startsWith(TRIAL_PREFIX) ? Math.max(4, Math.floor(maxPoints / 16)) : maxPoints;
}

/**
 * The history of one run: its step fields, step metrics (`metrics/<name>`), each trial's loss
 * (`trial/<n>/loss`), eval metrics (`eval/<split>/<metric>`) and markers, each point and marker
 * with its time.
 */
export class RunSeries {
  readonly runId: string;
  readonly maxPoints: number;
  readonly maxMarkers: number;
  #attempt = 1;
  #lastStep: number | null = null;
  #restarts: [number, number][] = [];
  #series = new Map<string, Series>();
  #markers: SeriesMarker[] = [];
  #boundedMarkers = 0;
  #droppedMarkers = 0;
  #trialCurves = 0;

  constructor(runId: string, options: { maxPoints: number; maxMarkers: number }, snapshot?: RunSeriesSnapshot) {
    this.runId = runId;
    this.maxPoints = options.maxPoints;
    this.maxMarkers = options.maxMarkers;
    if (snapshot !== undefined) {
      this.#attempt = snapshot.attempt;
      this.#lastStep = snapshot.last_step;
      this.#restarts = structuredClone(snapshot.restarts);
      // a canonical snapshot sorts its keys: the order of first value is found again
      const saved = namedSeries(snapshot).map(([name, series]) => ({
        name,
        series,
        key: firstAppearance(name, series),
      }));
      saved.sort((a, b) => compareKeys(a.key, b.key));
      for (const { name, series } of saved)
        this.#series.set(name, new Series(maxPointsOf(name, this.maxPoints), series));
      this.#trialCurves = saved.filter(({ name }) => name.startsWith(TRIAL_PREFIX)).length;
      this.#markers = structuredClone(snapshot.markers);
      this.#boundedMarkers = this.#markers.filter((marker) => isBounded(marker.kind)).length;
      this.#droppedMarkers = snapshot.dropped_markers;
    }
  }

  /** The series names, in order of first value. */
  names(): string[] {
    return [...this.#series.keys()];
  }

  series(name: string): Series | undefined {
    return this.#series.get(name);
  }

  /** Markers in stream order: restarts, evals, checkpoints, stop requests, the end. */
  markers(): readonly SeriesMarker[] {
    return this.#markers;
  }

  /** `eval` and `checkpoint` markers left out beyond `maxMarkers`. */
  get droppedMarkers(): number {
    return this.#droppedMarkers;
  }

  /** One series as uPlot data on the step axis: `curve` without the times. */
  uplot(name: string): UPlotSeries {
    const [x, y] = this.curve(name);
    return [x, y];
  }

  /**
   * One series as steps, values and times (seconds since the epoch). Steps ascend: a restart
   * resumes at an earlier step, so the points of the abandoned attempt from that step on are
   * left out and a `null` at the resume step breaks the line instead of drawing it back in
   * time. The break takes the time of the first point after it, so the times ascend too.
   */
  curve(name: string): SeriesCurve {
    const x: number[] = [];
    const y: (number | null)[] = [];
    const t: number[] = [];
    const resumeStep = new Map(this.#restarts);
    let attempt: number | undefined;
    for (const [pointAttempt, step, value, timeUs] of this.#series.get(name)?.points() ?? []) {
      const timeS = timeUs / 1_000_000;
      if (attempt !== undefined && pointAttempt !== attempt) {
        const resume = resumeStep.get(pointAttempt) ?? step;
        while (x.length > 0 && (x.at(-1) as number) >= resume) {
          x.pop();
          y.pop();
          t.pop();
        }
        x.push(resume);
        y.push(null);
        t.push(timeS);
      } else {
        // A rollback: the abandoned steps are left out.
        while (x.length > 0 && (x.at(-1) as number) >= step) {
          x.pop();
          y.pop();
          t.pop();
        }
      }
      attempt = pointAttempt;
      x.push(step);
      y.push(value);
      t.push(timeS);
    }
    return [x, y, t];
  }

  /** Take one event the run-state fold accepted. */
  add(event: Line | UnknownEvent): void {
    if (!isKnownEvent(event)) return;
    switch (event.event) {
      case "train.step": {
        const step = event.step as number;
        const timeUs = toTimestampUs(event.ts);
        this.#lastStep = step;
        for (const field of STEP_SERIES) {
          const value = event[field];
          if (typeof value === "number") this.#point(field, step, value, timeUs);
        }
        this.#points("metrics/", event.metrics ?? {}, step, timeUs);
        // a sweep's curves overlaid, trial by trial
        if (typeof event.trial === "number" && typeof event.loss === "number")
          this.#trialPoint(`${TRIAL_PREFIX}${event.trial}/loss`, step, event.loss, timeUs);
        break;
      }
      case "train.epoch":
        this.#lastStep = event.step as number;
        break;
      case "train.restarted":
        this.#attempt = event.attempt as number;
        this.#lastStep = event.step as number;
        this.#restarts.push([this.#attempt, this.#lastStep]);
        this.#marker("restart", this.#lastStep, event.reason as string, event.ts);
        break;
      case "train.rolled_back":
        // The same attempt goes on from an earlier step: its points go back along the axis.
        this.#lastStep = event.step as number;
        this.#marker("rollback", this.#lastStep, (event.reason as string | null) ?? null, event.ts);
        break;
      case "eval.completed": {
        const step = event.step as number;
        this.#points(`eval/${String(event.split)}/`, event.metrics, step, toTimestampUs(event.ts));
        this.#marker("eval", step, inTrial(event.split as string, event), event.ts);
        break;
      }
      case "checkpoint.saved":
        this.#marker("checkpoint", event.step as number, inTrial(event.reason as string, event), event.ts);
        break;
      case "stop.requested":
        this.#marker("stop", this.#lastStep, event.source as string, event.ts);
        break;
      case "run.finished":
        this.#marker("finished", (event.step as number | null) ?? this.#lastStep, event.status as string, event.ts);
        break;
      case "run.started":
      case "run.heartbeat":
      case "phase.progress":
      case "phase.started":
      case "phase.ended":
      case "trial.started":
      case "trial.ended":
        break; // nothing to plot
      default:
        assertNever(event);
    }
  }

  toJSON(): RunSeriesSnapshot {
    // defined, not assigned: a name like `__proto__` is only data
    const series: Record<string, SeriesSnapshot> = Object.fromEntries(
      [...this.#series].map(([name, values]) => [name, values.toJSON()]),
    );
    return {
      run_id: this.runId,
      attempt: this.#attempt,
      last_step: this.#lastStep,
      restarts: structuredClone(this.#restarts),
      series,
      markers: structuredClone(this.#markers),
      dropped_markers: this.#droppedMarkers,
    };
  }

  #point(name: string, step: number, value: number, timeUs: number): void {
    if (!Number.isFinite(value)) return; // as a reader reads the writer's null: no point
    let series = this.#series.get(name);
    if (series === undefined) {
      series = new Series(this.maxPoints);
      this.#series.set(name, series);
    }
    series.add(this.#attempt, step, value, timeUs);
  }

  #trialPoint(name: string, step: number, value: number, timeUs: number): void {
    if (!Number.isFinite(value)) return; // as #point
    let series = this.#series.get(name);
    if (series === undefined) {
      if (this.#trialCurves >= MAX_TRIAL_CURVES) return;
      this.#trialCurves += 1;
      series = new Series(maxPointsOf(name, this.maxPoints));
      this.#series.set(name, series);
    }
    series.add(this.#attempt, step, value, timeUs);
  }

  #points(prefix: string, metrics: Record<string, number | null | undefined>, step: number, timeUs: number): void {
    // Sorted names: the order of first appearance is the same in every language.
    for (const metric of Object.keys(metrics).sort()) {
      const value = metrics[metric];
      if (typeof value === "number") this.#point(prefix + metric, step, value, timeUs);
    }
  }

  #marker(kind: MarkerKind, step: number | null, label: string | null, ts: string): void {
    if (isBounded(kind)) {
      if (this.#boundedMarkers >= this.maxMarkers) {
        this.#droppedMarkers += 1;
        return;
      }
      this.#boundedMarkers += 1;
    }
    this.#markers.push({ kind, step, attempt: this.#attempt, label, time_us: toTimestampUs(ts) });
  }
}

/**
 * Where series `name` took its first value: the time and step of its first point (a bucket
 * keeps its first point through every merge), then its place within one line (the step fields
 * in STEP_SERIES order, step metrics, the trial's loss, evaluation metrics, each by name).
 */
function firstAppearance(name: string, saved: SeriesSnapshot): Appearance {
  const first = saved.buckets[0]?.[2];
  if (first === undefined) return [Number.POSITIVE_INFINITY, 0, 0, name]; // never saved: a series has a point
  const [, step, , timeUs] = first;
  const field = (STEP_SERIES as readonly string[]).indexOf(name);
  if (field >= 0) return [timeUs, step, field, ""];
  return [timeUs, step, STEP_SERIES.length + (LATER_PLACES.get(name.split("/", 1)[0] as string) ?? 0), name];
}

/** After the step fields, in the order a step and then an evaluation add them. */
const LATER_PLACES: ReadonlyMap<string, number> = new Map([
  ["metrics", 0],
  ["trial", 1],
  ["eval", 2],
]);

type Appearance = [timeUs: number, step: number, place: number, name: string];

function compareKeys(a: Appearance, b: Appearance): number {
  for (const index of [0, 1, 2, 3] as const) {
    if (a[index] !== b[index]) return a[index] < b[index] ? -1 : 1; // strings by UTF-16 code units, as in Python
  }
  return 0;
}

// Restarts, stops and the end are few by nature; evals and checkpoints may be many.
function isBounded(kind: MarkerKind): boolean {
  return kind === "eval" || kind === "checkpoint";
}

/**
 * The step-indexed history of every run, fed with the events a `RunStateFold` accepted
 * (a `StreamReader` created with `series` does it). Memory stays bounded: a series keeps
 * at most `maxPoints` points however long the run.
 */
export class SeriesStore {
  readonly maxPoints: number;
  readonly maxMarkers: number;
  #runs = new Map<string, RunSeries>();

  constructor(options: SeriesOptions = {}, snapshot?: SeriesStoreSnapshot) {
    this.maxPoints = snapshot?.max_points ?? options.maxPoints ?? DEFAULT_MAX_POINTS;
    this.maxMarkers = snapshot?.max_markers ?? options.maxMarkers ?? DEFAULT_MAX_MARKERS;
    for (const run of snapshot?.runs ?? []) this.#runs.set(run.run_id, new RunSeries(run.run_id, this, run));
  }

  /** A store that goes on from `toJSON()`'s output. */
  static fromJSON(snapshot: SeriesStoreSnapshot): SeriesStore {
    return new SeriesStore({}, snapshot);
  }

  /** Take one event the run-state fold accepted (a dropped one would rewrite history). */
  add(event: Line | UnknownEvent): void {
    let run = this.#runs.get(event.run_id);
    if (run === undefined) {
      run = new RunSeries(event.run_id, this);
      this.#runs.set(event.run_id, run);
    }
    run.add(event);
  }

  run(runId: string): RunSeries | undefined {
    return this.#runs.get(runId);
  }

  /** Run ids in order of first appearance. */
  runIds(): string[] {
    return [...this.#runs.keys()];
  }

  /** A JSON-serialisable snapshot; `canonicalStringify` of it matches the Python store's. */
  toJSON(): SeriesStoreSnapshot {
    return {
      max_points: this.maxPoints,
      max_markers: this.maxMarkers,
      runs: [...this.#runs.values()].map((run) => run.toJSON()),
    };
  }
}

/** A marker's label with the trial it belongs to, in a search: `validation, trial 3`. */
function inTrial(label: string, event: { trial?: unknown }): string {
  return typeof event.trial === "number" ? `${label}, trial ${event.trial}` : label;
}
