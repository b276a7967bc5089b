// Follow a stream served over HTTP with `Range` requests. Browser-safe: no Node API.
import { backoffMs } from "./backoff.js";
import { FetchError } from "./errors.js";
import { isAborted, sleep } from "./sleep.js";
import { whenVisible } from "./visibility.js";
import { streamChunks } from "./web-stream.js";

export interface FromFetchOptions {
  /** Start at this byte offset (a reader's `consumedBytes`): only newer bytes are fetched. Default 0. */
  offset?: number | undefined;
  /** How often to ask for new bytes when there are none (and to retry a 404). Default 1000 ms. */
  pollIntervalMs?: number | undefined;
  /** Stops the iteration: it then ends without an error, also in the middle of a body. */
  signal?: AbortSignal | undefined;
  /** The fetch to use (a test double, or one that adds authentication). Default `globalThis.fetch`. */
  fetch?: typeof globalThis.fetch | undefined;
  /** Extra request headers (e.g. `Authorization`). */
  headers?: HeadersInit | undefined;
  /** Passed to every request (`credentials`, `mode`, ...); `headers`, `signal` and `cache` are fromFetch's. */
  init?: Omit<RequestInit, "headers" | "signal" | "cache" | "method" | "body"> | undefined;
  /**
   * Called when the stream is shorter than the offset, or was replaced (truncated, rotated,
   * rewritten): the chunks that follow start again at offset 0, so a reader must start afresh.
   */
  onReset?: (() => void) | undefined;
  /** Told of every failed request that will be retried, with the number of failures in a row. */
  onError?: ((error: FetchError, failures: number) => void) | undefined;
  /** Failures in a row after which the iteration rejects with the last `FetchError`. Default: unlimited, 3 with `untilEnd`. */
  maxRetries?: number | undefined;
  /** The longest wait between retries (they back off exponentially from the poll interval). Default 30000 ms. */
  maxBackoffMs?: number | undefined;
  /** Do not poll while the page is hidden (a background tab); polling resumes when it is shown. */
  pauseWhenHidden?: boolean | undefined;
  /** Stop once the server reports no new bytes, instead of polling (for a finished file). */
  untilEnd?: boolean | undefined;
}

const DEFAULT_POLL_MS = 1000;
const DEFAULT_MAX_BACKOFF_MS = 30_000;
const UNTIL_END_MAX_RETRIES = 3;
const NEWLINE = 0x0a;
const CONTENT_RANGE = /^bytes\s+(?:(\d+)-(\d+)|\*)\/(\d+|\*)$/i;

/** What fromFetch knows of the bytes it has delivered. */
interface Position {
  offset: number;
  /** The byte before `offset`, asked for again with each poll to tell growth from replacement. */
  lastByte: number | undefined;
  /** `ETag` (or `Last-Modified`) and size at the last answer: a new one at the same size is a replacement. */
  validator: { tag: string; size: number } | undefined;
  /** The resource's first bytes as delivered (unknown after a resume): checked again when it grows. */
  head: Uint8Array | undefined;
}

/** How many first bytes identify a stream: its first line names the run and its start time. */
const HEAD_BYTES = 256;

/**
 * Yields the bytes of the resource at `url` as it grows.
 *
 * Each poll asks for `Range: bytes=(offset-1)-`: the byte before the offset must be the one
 * already delivered (a `\n` at a resume offset), so an idle poll transfers one byte and a
 * replaced file is noticed. 416 means a shorter resource (reset); 200 (no range support)
 * delivers the whole resource, of which the bytes before the offset are skipped. 404 is
 * waited out at the poll interval; network errors, 408, 429 and 5xx are retried with
 * exponential backoff and jitter; each failure goes to `onError`. The iteration rejects with
 * a `FetchError` on a permanent error (a bad URL, another status, a compressed body) or
 * after `maxRetries` failures in a row.
 */
export async function* fromFetch(
  url: string | URL,
  options: FromFetchOptions = {},
): AsyncGenerator<Uint8Array, void, undefined> {
  const href = checkedUrl(url);
  const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  const pollMs = options.pollIntervalMs ?? DEFAULT_POLL_MS;
  const maxRetries =
    options.maxRetries ?? (options.untilEnd === true ? UNTIL_END_MAX_RETRIES : Number.POSITIVE_INFINITY);
  const signal = options.signal;
  const start = options.offset ?? 0;
  // A resume offset is a reader's consumedBytes: the byte before it ends a line.
  const position: Position = {
    offset: start,
    lastByte: start > 0 ? NEWLINE : undefined,
    validator: undefined,
    head: start > 0 ? undefined : new Uint8Array(0),
  };
  const reset = (): void => {
    options.onReset?.();
    Object.assign(position, { offset: 0, lastByte: undefined, validator: undefined, head: new Uint8Array(0) });
  };
  const baseHeaders = new Headers(options.headers); // a malformed header fails here, once
  const request = (range: string): Promise<Response> => {
    const headers = new Headers(baseHeaders);
    headers.set("Range", range);
    return fetchImpl(href, { ...options.init, headers, cache: "no-store", signal: signal ?? null });
  };
  let failures = 0;
  /** Reports a failure; rejects when it is permanent or one too many, else waits. False: aborted. */
  const failed = async (error: FetchError): Promise<boolean> => {
    if (error.permanent) throw error;
    failures += 1;
    options.onError?.(error, failures);
    if (failures > maxRetries) throw error;
    const waitingForFile = error.status === 404; // a normal wait, not a fault to back off from
    return sleep(
      waitingForFile ? pollMs : backoffMs(failures, pollMs, options.maxBackoffMs ?? DEFAULT_MAX_BACKOFF_MS),
      signal,
    );
  };

  while (!isAborted(signal)) {
    if (options.pauseWhenHidden === true && !(await whenVisible(signal))) return;
    let received = 0;
    try {
      const from = position.lastByte === undefined ? position.offset : position.offset - 1;
      const response = await request(`bytes=${from}-`);
      const status = response.status;
      if (status !== 200 && status !== 206 && status !== 416) {
        await discard(response);
        const retried = status === 404 || status === 408 || status === 429 || status >= 500;
        if (!(await failed(new FetchError("http_status", href, `HTTP ${status}`, { status, permanent: !retried }))))
          return;
        continue;
      }
      failures = 0;
      const encoding = response.headers.get("Content-Encoding");
      if (encoding !== null && encoding.trim().toLowerCase() !== "identity") {
        await discard(response);
        const message = `the body is compressed (Content-Encoding: ${encoding}), so its bytes are not the file's and offsets cannot be trusted: serve the stream without compression`;
        throw new FetchError("content_encoding", href, message, { status, permanent: true });
      }
      if (status === 416) {
        await discard(response);
        const { total } = parseContentRange(response.headers.get("Content-Range"));
        if (total !== undefined && total < position.offset) {
          reset();
          continue;
        }
      } else {
        if (status === 206 && grew(response, position) && (await headDiffers(request, position.head))) {
          await discard(response); // grown, but from another first line: a new file of the same name
          reset();
          continue;
        }
        const outcome = status === 206 ? partialBody(response, from, position, href) : wholeBody(response, position);
        for await (const chunk of outcome.chunks) {
          received += chunk.length;
          yield chunk;
        }
        if (outcome.replaced()) {
          reset();
          continue;
        }
      }
    } catch (error) {
      if (isAborted(signal)) return; // an abort, also in the middle of a body, ends the stream quietly
      if (!(error instanceof TypeError)) throw error; // fetch's network failure is a TypeError
      // Refused, reset, or cut in the middle of a body: go on from the bytes delivered.
      if (!(await failed(new FetchError("network", href, error.message, { permanent: false, cause: error })))) return;
      continue;
    }
    if (received > 0) continue; // more may be waiting: ask again before sleeping
    if (options.untilEnd === true) return;
    if (!(await sleep(pollMs, signal))) return;
  }
}

/** Chunks of a body, and whether it showed that the resource was replaced (then read from 0 again). */
interface BodyOutcome {
  chunks: AsyncGenerator<Uint8Array, void, undefined>;
  replaced: () => boolean;
}

/** A 206 answer to `bytes=from-`: check its start, the byte before the offset and the validator. */
function partialBody(response: Response, from: number, position: Position, href: string): BodyOutcome {
  let replaced = false;
  async function* chunks(): AsyncGenerator<Uint8Array, void, undefined> {
    const range = parseContentRange(response.headers.get("Content-Range"));
    if (range.start !== undefined && range.start !== from) {
      await discard(response);
      throw new FetchError(
        "bad_range",
        href,
        `asked for bytes from ${from}, the server sent them from ${range.start}`,
        { status: 206, permanent: true },
      );
    }
    if (sameSizeButChanged(position, response, range.total)) {
      replaced = true;
      await discard(response);
      return;
    }
    let checkPending = position.lastByte !== undefined;
    for await (let chunk of bodyChunks(response)) {
      if (checkPending) {
        checkPending = false;
        if (chunk[0] !== position.lastByte) {
          replaced = true; // another file now: its byte before the offset differs
          return;
        }
        chunk = chunk.subarray(1);
        if (chunk.length === 0) continue;
      }
      advance(position, chunk);
      yield chunk;
    }
  }
  return { chunks: chunks(), replaced: () => replaced };
}

/** A 200 (no range support): the whole resource; skip what was delivered, checking the byte before the offset. */
function wholeBody(response: Response, position: Position): BodyOutcome {
  let replaced = false;
  async function* chunks(): AsyncGenerator<Uint8Array, void, undefined> {
    const length = Number(response.headers.get("Content-Length") ?? Number.NaN);
    if (Number.isFinite(length) && length < position.offset) {
      replaced = true;
      await discard(response);
      return;
    }
    let read = 0; // bytes of the body seen so far
    for await (const chunk of bodyChunks(response)) {
      const end = read + chunk.length;
      if (
        position.lastByte !== undefined &&
        read < position.offset &&
        end >= position.offset &&
        chunk[position.offset - 1 - read] !== position.lastByte
      ) {
        replaced = true;
        return;
      }
      read = end;
      if (end <= position.offset) continue;
      const fresh = chunk.subarray(chunk.length - (end - position.offset));
      advance(position, fresh);
      yield fresh;
    }
    if (read < position.offset) replaced = true; // shorter than the offset after all (no Content-Length was sent)
  }
  return { chunks: chunks(), replaced: () => replaced };
}

function advance(position: Position, chunk: Uint8Array): void {
  const head = position.head;
  if (head !== undefined && head.length < HEAD_BYTES) {
    const more = chunk.subarray(0, HEAD_BYTES - head.length);
    position.head = new Uint8Array(head.length + more.length);
    position.head.set(head);
    position.head.set(more, head.length);
  }
  position.offset += chunk.length;
  position.lastByte = chunk[chunk.length - 1];
}

/** A 206 that brings bytes past the offset. */
function grew(response: Response, position: Position): boolean {
  const { total } = parseContentRange(response.headers.get("Content-Range"));
  return position.offset > 0 && total !== undefined && total > position.offset;
}

/**
 * Asks for the first bytes again and compares them with those delivered: a file replaced
 * by a larger one may by chance have a `\n` at the same place, never the same first line.
 * One small request each time the resource grows; none while it is idle.
 */
async function headDiffers(
  request: (range: string) => Promise<Response>,
  head: Uint8Array | undefined,
): Promise<boolean> {
  if (head === undefined || head.length === 0) return false;
  const response = await request(`bytes=0-${head.length - 1}`);
  const bytes = new Uint8Array(await response.arrayBuffer());
  const same =
    (response.status === 206 || response.status === 200) &&
    bytes.length >= head.length &&
    head.every((byte, index) => bytes[index] === byte);
  return !same;
}

/**
 * Records the response's `ETag` (or `Last-Modified`) with the resource size; true when
 * the size is the one seen last but the validator is not: the file was rewritten in place
 * or replaced by one of the same size. (Growth changes the validator too: the byte before
 * the offset tells it from a replacement.)
 */
function sameSizeButChanged(position: Position, response: Response, size: number | undefined): boolean {
  const tag = response.headers.get("ETag") ?? response.headers.get("Last-Modified");
  if (tag === null || size === undefined) return false;
  const previous = position.validator;
  position.validator = { tag, size };
  return previous !== undefined && previous.size === size && previous.tag !== tag;
}

function checkedUrl(url: string | URL): string {
  const base = (globalThis as { location?: { href: string } }).location?.href;
  let parsed: URL;
  try {
    parsed = new URL(url, base);
  } catch (error) {
    throw new FetchError("bad_url", String(url), "not a valid URL", { permanent: true, cause: error });
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new FetchError("bad_url", parsed.href, `${parsed.protocol} is not http: or https:`, { permanent: true });
  }
  return parsed.href;
}

function parseContentRange(header: string | null): { start?: number; total?: number } {
  const match = header === null ? null : CONTENT_RANGE.exec(header.trim());
  if (match === null) return {};
  const [, start, , total] = match;
  return {
    ...(start === undefined ? {} : { start: Number(start) }),
    ...(total === undefined || total === "*" ? {} : { total: Number(total) }),
  };
}

async function discard(response: Response): Promise<void> {
  await response.body?.cancel().catch(() => undefined);
}

function bodyChunks(response: Response): AsyncGenerator<Uint8Array, void, undefined> | Uint8Array[] {
  return response.body === null ? [] : streamChunks(response.body);
}
