// The decoder and the fold together: bytes in, reader state out.
import { type DecodedLine, Decoder, type DecoderOptions } from "./decoder.js";
import { RunStateFold, type StateOptions } from "./fold.js";
import { type SeriesOptions, SeriesStore } from "./series.js";
import type { ReaderState, RunState } from "./types.js";

export interface StreamReaderOptions extends Omit<DecoderOptions, "offset" | "lines"> {
  /** Resume at this byte offset (a previous reader's `consumedBytes`); the runs start afresh. Default 0. */
  offset?: number | undefined;
  /** The lines counted before `offset`, so that line numbers go on. Default 0. */
  lines?: number | undefined;
  /**
   * Go on from a saved `toState()`: reading starts at its `consumed_bytes` and its runs are
   * kept, so sequence gaps and staleness are still detected. Overrides `offset` and `lines`.
   */
  resume?: ReaderState | undefined;
  /** List at most this many diagnostics in the state (the first ones) and count the rest. Default 1000. */
  maxDiagnostics?: number | undefined;
  /**
   * Keep each run's step-indexed history in `series` (`true` for the default bounds). A
   * `SeriesStore` is gone on from: with `resume`, one restored (`SeriesStore.fromJSON`) from
   * the same point of the stream, so a run opens from a saved state without its first bytes.
   */
  series?: SeriesOptions | boolean | SeriesStore | undefined;
}

/**
 * Reads a trainwire stream incrementally and keeps the state of every run in it.
 *
 * Resume after a restart with `new StreamReader({ resume: savedState })`: only the bytes
 * after `savedState.consumed_bytes` are read, and the runs go on from the saved state; add
 * `series: SeriesStore.fromJSON(savedSeries)` and their histories go on too.
 */
export class StreamReader {
  readonly decoder: Decoder;
  readonly fold: RunStateFold;
  /** The runs' history for charts; present when the reader was created with `series`. */
  readonly series: SeriesStore | undefined;

  constructor(options: StreamReaderOptions = {}) {
    const resume = options.resume;
    this.decoder = new Decoder({
      ...options,
      offset: resume?.consumed_bytes ?? options.offset,
      lines: resume?.lines ?? options.lines,
    });
    this.fold = new RunStateFold({ strict: options.strict, maxDiagnostics: options.maxDiagnostics, resume });
    const series = options.series ?? false;
    if (series instanceof SeriesStore) this.series = series;
    else this.series = series === false ? undefined : new SeriesStore(series === true ? {} : series);
  }

  /** Read one chunk; returns what its complete lines decoded to (dropped lines included), after folding them. */
  feed(chunk: Uint8Array | string): DecodedLine[] {
    const decoded = this.decoder.feed(chunk);
    for (const item of decoded) {
      if (this.fold.apply(item) && item.kind !== "diagnostic") this.series?.add(item.event);
    }
    return decoded;
  }

  get consumedBytes(): number {
    return this.decoder.consumedBytes;
  }

  get partialTailBytes(): number {
    return this.decoder.partialTailBytes;
  }

  get lines(): number {
    return this.decoder.lines;
  }

  /** The runs so far (frozen copies, reused while a run does not change), `stale` decided at `options.now`. */
  runs(options: StateOptions = {}): Readonly<RunState>[] {
    return this.fold.runs(options);
  }

  /** One run by id, or undefined. */
  run(runId: string, options: StateOptions = {}): Readonly<RunState> | undefined {
    return this.fold.run(runId, options);
  }

  /** The run whose first line came last, or undefined. */
  latestRun(options: StateOptions = {}): Readonly<RunState> | undefined {
    return this.fold.latestRun(options);
  }

  /** The reader state of schemas/reader-state/v1; serialise it with `canonicalStringify`. */
  toState(options: StateOptions = {}): ReaderState {
    return this.fold.toState(this.decoder, options);
  }
}
