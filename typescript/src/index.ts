// trainwire: read training progress streams. Browser-safe: no Node API in this entry.
export { canonicalStringify } from "./canonical.js";
export {
  DEFAULT_MAX_LINE_BYTES,
  Decoder,
  type DecodedDiagnostic,
  type DecodedEvent,
  type DecodedLine,
  type DecodedUnknown,
  type DecoderOptions,
} from "./decoder.js";
export { FetchError, StreamError, TrainwireError, type FetchErrorCode } from "./errors.js";
export { DEFAULT_MAX_DIAGNOSTICS, RunStateFold, type FoldOptions, type FramingCounts, type StateOptions } from "./fold.js";
export { StreamReader, type StreamReaderOptions } from "./reader.js";
export {
  DEFAULT_MAX_MARKERS,
  DEFAULT_MAX_POINTS,
  RunSeries,
  Series,
  SeriesStore,
  type MarkerKind,
  type RunSeriesSnapshot,
  type SeriesBucket,
  type SeriesMarker,
  type SeriesOptions,
  type SeriesPoint,
  type SeriesSnapshot,
  type SeriesStoreSnapshot,
  type UPlotSeries,
} from "./series.js";
export { DecoderStream, watchRun, type RunUpdate, type SourceHooks, type WatchRunOptions, type WatchSource } from "./watch.js";
export type * from "./types.js";
export * from "./validators.js";
export { VERSION } from "./version.js";

/** The contract's MAJOR version this package reads. */
export const SCHEMA_VERSION = 1;
