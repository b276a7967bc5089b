// The decoder and the fold together: bytes in, reader state out.
import { Decoder, type DecodedLine, type DecoderOptions } from "./decoder.js";
import { RunStateFold, type StateOptions } from "./fold.js";
import type { ReaderState, RunState } from "./types.js";

export type StreamReaderOptions = DecoderOptions;

/**
 * Reads a trainwire stream incrementally and keeps the state of every run in it.
 *
 * Resume after a restart with `new StreamReader({ offset: state.consumed_bytes, lines: state.lines })`:
 * only the bytes after the offset are read (the runs start afresh from there).
 */
export class StreamReader {
  readonly decoder: Decoder;
  readonly fold: RunStateFold;

  constructor(options: StreamReaderOptions = {}) {
    this.decoder = new Decoder(options);
    this.fold = new RunStateFold({ strict: options.strict });
  }

  /** Read one chunk; returns what its complete lines decoded to, after folding them. */
  feed(chunk: Uint8Array | string): DecodedLine[] {
    const decoded = this.decoder.feed(chunk);
    for (const item of decoded) this.fold.apply(item);
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

  /** The runs so far (copies), `stale` decided at `options.now` when given. */
  runs(options: StateOptions = {}): RunState[] {
    return this.fold.runs(options);
  }

  /** The reader state of schemas/reader-state/v1; serialise it with `canonicalStringify`. */
  toState(options: StateOptions = {}): ReaderState {
    return this.fold.toState(this.decoder, options);
  }
}
