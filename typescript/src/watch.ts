// Items, not bytes: a web TransformStream of decoded lines, and watchRun's run updates. Browser-safe.
import { type DecodedLine, Decoder, type DecoderOptions } from "./decoder.js";
import type { StateOptions } from "./fold.js";
import { StreamReader } from "./reader.js";
import type { RunSeries, SeriesOptions } from "./series.js";
import { isAborted } from "./sleep.js";
import type { ReaderState, RunState } from "./types.js";
import { streamChunks } from "./web-stream.js";

/**
 * Bytes in, decoded lines out (events, unknown events, diagnostics), like `TextDecoderStream`:
 * `response.body.pipeThrough(new DecoderStream())`.
 */
export class DecoderStream extends TransformStream<Uint8Array | string, DecodedLine> {
  constructor(options: DecoderOptions = {}) {
    const decoder = new Decoder(options);
    super({
      transform(chunk, controller) {
        for (const item of decoder.feed(chunk)) controller.enqueue(item);
      },
    });
  }
}

/** What a source factory is given: where to start, whom to tell of a reset, when to stop. */
export interface SourceHooks {
  offset: number;
  onReset: () => void;
  signal: AbortSignal | undefined;
}

/**
 * The bytes watchRun reads: an async iterable or a web `ReadableStream`, or a function that
 * opens one with watchRun's hooks, e.g. `(hooks) => fromFetch(url, hooks)` or
 * `(hooks) => followFile(path, hooks)`: then a replaced file resets the watch by itself.
 */
export type WatchSource =
  | AsyncIterable<Uint8Array | string>
  | ReadableStream<Uint8Array>
  | ((hooks: SourceHooks) => AsyncIterable<Uint8Array | string>);

export interface WatchRunOptions {
  /** The run to follow; default the latest: the run whose first line came last. */
  runId?: string | undefined;
  /** Go on from a saved reader state (`update.reader.toState()`): read from its offset, keep its runs. */
  resume?: ReaderState | undefined;
  /** Keep the run's step-indexed history (`update.series`); `true` for the default bounds. */
  series?: SeriesOptions | boolean | undefined;
  /** Ends the iteration quietly. */
  signal?: AbortSignal | undefined;
  /** The silence (seconds) after which a running run is `stale`, instead of 3 heartbeat intervals. */
  staleAfterS?: number | undefined;
  /** Passed to the reader: line limit, strict mode. */
  maxLineBytes?: number | undefined;
  strict?: boolean | undefined;
}

/** One update: the lines a chunk brought for the watched run, and its state after them. */
export interface RunUpdate {
  /** The watched run's events and unknown events from this chunk, and every diagnostic. */
  events: DecodedLine[];
  /** The watched run (a frozen copy; `stale` decided at the update's time), undefined until it has a line. */
  state: Readonly<RunState> | undefined;
  /** Its history, with the `series` option. */
  series: RunSeries | undefined;
  /** True on the first update after the source was replaced or truncated: history starts afresh. */
  reset: boolean;
  /** The reader (all runs, `toState()` to save for a resume). */
  reader: StreamReader;
}

/**
 * Follows one run of a stream: yields an update for each chunk that brought lines. The
 * `signal` ends it quietly, with any source.
 */
export async function* watchRun(
  source: WatchSource,
  options: WatchRunOptions = {},
): AsyncGenerator<RunUpdate, void, undefined> {
  const newReader = (resume?: ReaderState): StreamReader =>
    new StreamReader({ resume, series: options.series, maxLineBytes: options.maxLineBytes, strict: options.strict });
  let reader = newReader(options.resume);
  let reset = false;
  const hooks: SourceHooks = {
    offset: reader.consumedBytes,
    onReset: () => {
      reader = newReader();
      reset = true;
    },
    signal: options.signal,
  };
  const chunks =
    typeof source === "function" ? source(hooks) : isReadableStream(source) ? streamChunks(source) : source;
  try {
    for await (const chunk of chunks) {
      if (isAborted(options.signal)) return;
      const decoded = reader.feed(chunk);
      if (decoded.length === 0) continue;
      // Liveness at the time of the update. A run that falls silent brings no update: a
      // dashboard asks `update.reader.run(id, { now: new Date() })` on a timer for that.
      const now: StateOptions = { now: new Date(), staleAfterS: options.staleAfterS };
      const state = options.runId === undefined ? reader.latestRun(now) : reader.run(options.runId, now);
      const runId = state?.run_id;
      yield {
        events: decoded.filter((item) => item.kind === "diagnostic" || item.event.run_id === runId),
        state,
        series: runId === undefined ? undefined : reader.series?.run(runId),
        reset,
        reader,
      };
      reset = false;
    }
  } catch (error) {
    if (isAborted(options.signal)) return; // an abort while reading ends the watch quietly
    throw error;
  }
}

function isReadableStream(source: WatchSource): source is ReadableStream<Uint8Array> {
  return typeof (source as ReadableStream<Uint8Array>).getReader === "function";
}
