import type { Diagnostic } from "./types.js";

/** Base class of every error trainwire throws on purpose; `code` says which case it is. */
export class TrainwireError extends Error {
  override name = "TrainwireError";
  readonly code: string;

  constructor(code: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
  }
}

/** A reader in strict mode met a line it would otherwise skip with a diagnostic. */
export class StreamError extends TrainwireError {
  override name = "StreamError";
  readonly line: number;
  declare readonly code: Diagnostic["code"];
  readonly diagnostic: Diagnostic;

  constructor(diagnostic: Diagnostic) {
    super(diagnostic.code, `line ${diagnostic.line}: ${diagnostic.code}: ${diagnostic.message}`);
    this.diagnostic = diagnostic;
    this.line = diagnostic.line;
  }
}

/** Why fetching a stream failed. */
export type FetchErrorCode =
  | "bad_url" // not an http(s) URL: permanent
  | "network" // connection refused, DNS, reset: retried
  | "http_status" // an HTTP status that is not a stream's answer (`status`): 404, 408, 429, 5xx retried
  | "content_encoding" // a compressed body: its bytes are not the file's, offsets would be wrong; permanent
  | "bad_range"; // the server sent other bytes than asked: permanent

/** Fetching a stream failed; `status` is the HTTP status when there was a response. */
export class FetchError extends TrainwireError {
  override name = "FetchError";
  declare readonly code: FetchErrorCode;
  readonly url: string;
  readonly status: number | undefined;
  /** Retrying cannot help (a bad URL, 401, 403, a compressed body, ...). */
  readonly permanent: boolean;

  constructor(
    code: FetchErrorCode,
    url: string,
    message: string,
    options: { status?: number | undefined; permanent: boolean; cause?: unknown },
  ) {
    super(code, `GET ${url}: ${message}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.url = url;
    this.status = options.status;
    this.permanent = options.permanent;
  }
}
