import type { Diagnostic } from "./types.js";

/** Base class of every error trainwire throws on purpose. */
export class TrainwireError extends Error {
  override name = "TrainwireError";
}

/** A reader in strict mode met a line it would otherwise skip with a diagnostic. */
export class StreamError extends TrainwireError {
  override name = "StreamError";
  readonly line: number;
  readonly code: Diagnostic["code"];
  readonly diagnostic: Diagnostic;

  constructor(diagnostic: Diagnostic) {
    super(`line ${diagnostic.line}: ${diagnostic.code}: ${diagnostic.message}`);
    this.diagnostic = diagnostic;
    this.line = diagnostic.line;
    this.code = diagnostic.code;
  }
}
