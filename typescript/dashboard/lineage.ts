// A resumed run is a new run in the same stream whose `run.started.resumed_from` names the run
// it came from: the page draws the chain as one curve, each resume marked where it resumed.
import {
  DEFAULT_MAX_MARKERS,
  DEFAULT_MAX_POINTS,
  namedSeries,
  RunSeries,
  type RunSeriesSnapshot,
  type SeriesMarker,
  type SeriesSnapshot,
} from "../src/series.js";

/** What a `run.started` says about where the run came from. */
export interface RunOrigin {
  /** `resumed_from` was set: the run continues an earlier one. */
  resumed: boolean;
  /** The run it resumed, when the writer knew it. */
  from: string | null;
  /** The step it resumed at, when known. */
  step: number | null;
}

/** A chain is at most this long: a stream of thousands of resumes still draws quickly. */
export const MAX_CHAIN = 64;

/**
 * The runs `runId` continues, oldest first, ending with `runId`. A resume naming no run
 * continues the run that started just before it in the stream.
 */
export function chainOf(runId: string, origins: ReadonlyMap<string, RunOrigin>): string[] {
  const order = [...origins.keys()];
  const chain = [runId];
  for (let current = runId; chain.length < MAX_CHAIN; ) {
    const origin = origins.get(current);
    if (origin === undefined || !origin.resumed) break;
    const previous = origin.from ?? order[order.indexOf(current) - 1];
    if (previous === undefined || !origins.has(previous) || chain.includes(previous)) break;
    chain.unshift(previous);
    current = previous;
  }
  return chain;
}

/**
 * The chain's history as one run's snapshot: each process's attempts follow the previous
 * process's, and each resume is a restart at its step (so the curve breaks there instead of
 * drawing back in time) with a `restart` marker labelled "resumed from <run>".
 */
export function joinedSnapshot(
  chain: readonly RunSeries[],
  origins: ReadonlyMap<string, RunOrigin>,
): RunSeriesSnapshot {
  const last = chain.at(-1);
  if (last === undefined) throw new Error("a chain has at least one run");
  const joined: RunSeriesSnapshot = {
    ...last.toJSON(),
    attempt: 0,
    restarts: [],
    series: {},
    markers: [],
    dropped_markers: 0,
  };
  // by name in a Map: a series name is data, never a property of Object.prototype
  const series = new Map<string, SeriesSnapshot>();
  let previous: RunSeriesSnapshot | undefined;
  for (const run of chain) {
    const part = run.toJSON();
    const offset = joined.attempt;
    if (previous !== undefined) {
      const step = origins.get(run.runId)?.step ?? firstStep(part) ?? previous.last_step ?? 0;
      joined.restarts.push([offset + 1, step]);
      const resume: SeriesMarker = {
        kind: "restart",
        step,
        attempt: offset + 1,
        label: `resumed from ${previous.run_id}`,
        time_us: firstTimeUs(part) ?? 0,
      };
      joined.markers.push(resume);
    }
    joined.restarts.push(...part.restarts.map(([attempt, step]): [number, number] => [attempt + offset, step]));
    joined.markers.push(...part.markers.map((marker) => ({ ...marker, attempt: marker.attempt + offset })));
    for (const [name, saved] of namedSeries(part)) {
      const into = series.get(name) ?? { ...saved, bucket_size: 1, count: 0, buckets: [] };
      into.bucket_size = Math.max(into.bucket_size, saved.bucket_size);
      into.count += saved.count;
      into.buckets.push(
        ...saved.buckets.map(([attempt, ...rest]): (typeof into.buckets)[number] => [attempt + offset, ...rest]),
      );
      series.set(name, into);
    }
    joined.dropped_markers += part.dropped_markers;
    joined.attempt = offset + part.attempt;
    previous = part;
  }
  return { ...joined, series: Object.fromEntries(series) };
}

/** The chain's history as one `RunSeries` (of the latest run's id), for `chartList`. */
export function joinedHistory(chain: readonly RunSeries[], origins: ReadonlyMap<string, RunOrigin>): RunSeries {
  const snapshot = joinedSnapshot(chain, origins);
  return new RunSeries(snapshot.run_id, { maxPoints: DEFAULT_MAX_POINTS, maxMarkers: DEFAULT_MAX_MARKERS }, snapshot);
}

function firstStep(snapshot: RunSeriesSnapshot): number | undefined {
  const firsts = namedSeries(snapshot).map(([, series]) => series.buckets[0]?.[2][1] ?? Number.POSITIVE_INFINITY);
  const first = Math.min(...firsts);
  return Number.isFinite(first) ? first : undefined;
}

/** The time of the first point a run's series hold: where its resume is marked on a wall-clock axis. */
function firstTimeUs(snapshot: RunSeriesSnapshot): number | undefined {
  const firsts = namedSeries(snapshot).map(([, series]) => series.buckets[0]?.[2][3] ?? Number.POSITIVE_INFINITY);
  const first = Math.min(...firsts);
  return Number.isFinite(first) ? first : undefined;
}
