// A run's opening (`GET /api/runs/{key}/opening`, see docs/dashboard.md): every run's state,
// series and panel events at an offset of the stream, from the run's journal, so the worker
// reads only the stream past it. The answer is checked before it is trusted: anything else (no
// opening, an unknown version, a broken or hostile answer) and the stream is read from byte 0.

import { validateSeriesStoreSnapshot } from "../src/generated/validate-series.js";
import { type Line, type ReaderState, StreamReader } from "../src/index.js";
import { DEFAULT_MAX_MARKERS, DEFAULT_MAX_POINTS, SeriesStore, type SeriesStoreSnapshot } from "../src/series.js";
import { validateEvent, validateReaderState } from "../src/validators.js";
import { isRecord } from "./checks.js";
import { VIEW_EVENTS } from "./feed-messages.js";

/** The version of the opening this page knows. */
export const OPENING_VERSION = 1;

export interface Opening {
  /** Bytes of the stream the opening covers: the stream is read on from here. */
  offset: number;
  /** Every run's state at `offset` (`consumed_bytes` is `offset`). */
  state: ReaderState;
  /** Every run's series at `offset`, as `SeriesStore.toJSON()` gives it. */
  series: SeriesStoreSnapshot;
  /** Every run's panel events (VIEW_EVENTS) before `offset`, in stream order. */
  events: Line[];
}

/** The run's opening from `url`, checked; undefined when there is none to trust. */
export async function fetchOpening(
  url: string,
  headers: HeadersInit,
  fetchImpl: typeof globalThis.fetch = globalThis.fetch.bind(globalThis),
): Promise<Opening | undefined> {
  try {
    const response = await fetchImpl(url, { headers, cache: "no-store" });
    if (response.status !== 200) {
      await response.body?.cancel();
      return undefined;
    }
    return checkOpening(await response.json());
  } catch {
    return undefined; // unreachable, or not JSON: the stream from byte 0 still works
  }
}

/** A reader that goes on from the opening, or undefined when its state cannot be gone on from. */
export function readerFrom(opening: Opening): StreamReader | undefined {
  try {
    return new StreamReader({ resume: opening.state, series: SeriesStore.fromJSON(opening.series) });
  } catch {
    return undefined;
  }
}

/**
 * The answer as an Opening when it is one this page can trust, else undefined. Each part's shape
 * is its schema's (the series a snapshot's store, `schemas/series/`, by the validator generated
 * from it, as the server checks its snapshots); what a schema cannot state is checked here.
 */
export function checkOpening(answer: unknown): Opening | undefined {
  if (!isRecord(answer) || answer["opening_version"] !== OPENING_VERSION) return undefined;
  const { offset, state, series, events } = answer;
  if (!isCount(offset) || !validateReaderState(state) || state.consumed_bytes !== offset) return undefined;
  // the page's own bounds: the charts are then the ones reading from byte 0 would give
  if (
    !validateSeriesStoreSnapshot(series) ||
    series.max_points !== DEFAULT_MAX_POINTS ||
    series.max_markers !== DEFAULT_MAX_MARKERS
  )
    return undefined;
  const runs = new Set(state.runs.map((run) => run.run_id));
  if (!Array.isArray(events) || !events.every((event) => isPanelEvent(event) && runs.has(event.run_id)))
    return undefined;
  return { offset, state, series, events };
}

function isPanelEvent(value: unknown): value is Line {
  if (!isRecord(value)) return false;
  const name = value["event"];
  if (typeof name !== "string" || !VIEW_EVENTS.has(name)) return false;
  return validateEvent[name as keyof typeof validateEvent](value);
}

function isCount(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}
