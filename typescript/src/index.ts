// trainwire: read training progress streams. Browser-safe: no Node API in this entry.
export { canonicalStringify } from "./canonical.js";
export {
  DEFAULT_MAX_LINE_BYTES,
  type DecodedDiagnostic,
  type DecodedEvent,
  type DecodedLine,
  type DecodedUnknown,
  Decoder,
  type DecoderOptions,
} from "./decoder.js";
export { FetchError, type FetchErrorCode, StreamError, TrainwireError } from "./errors.js";
export {
  DEFAULT_MAX_DIAGNOSTICS,
  type FoldOptions,
  type FramingCounts,
  RunStateFold,
  type StateOptions,
} from "./fold.js";
export { StreamReader, type StreamReaderOptions } from "./reader.js";
export {
  DEFAULT_MAX_MARKERS,
  DEFAULT_MAX_POINTS,
  MAX_TRIAL_CURVES,
  type MarkerKind,
  RunSeries,
  type RunSeriesSnapshot,
  Series,
  type SeriesBucket,
  type SeriesMarker,
  type SeriesOptions,
  type SeriesPoint,
  type SeriesSnapshot,
  SeriesStore,
  type SeriesStoreSnapshot,
  type UPlotSeries,
} from "./series.js";
export type * from "./types.js";
export * from "./validators.js";
export {
  completenessText,
  isLowerBetter,
  isOver,
  paramsText,
  statusText,
  VERDICT_VERSION,
  type VerdictInput,
  verdictOf,
  verdictText,
} from "./verdict.js";
export { VERSION } from "./version.js";
export {
  DecoderStream,
  type RunUpdate,
  type SourceHooks,
  type WatchRunOptions,
  type WatchSource,
  watchRun,
} from "./watch.js";

/** The contract's MAJOR version this package reads. */
export const SCHEMA_VERSION = 1;
