// Follow a stream served over HTTP with `Range` requests. Browser-safe: no Node API.
import { sleep } from "./sleep.js";

export interface FromFetchOptions {
  /** Start at this byte offset (a reader's `consumedBytes`): only newer bytes are fetched. Default 0. */
  offset?: number | undefined;
  /** How often to ask for new bytes when there are none. Default 1000 ms. */
  pollIntervalMs?: number | undefined;
  /** Stops the iteration (it then ends without an error). */
  signal?: AbortSignal | undefined;
  /** The fetch to use (a test double, or one that adds authentication). Default `globalThis.fetch`. */
  fetch?: typeof globalThis.fetch | undefined;
  /** Extra request headers (e.g. `Authorization`). */
  headers?: Record<string, string> | undefined;
  /**
   * Called when the stream is shorter than the offset (truncated or replaced): the chunks
   * that follow start again at offset 0, so a reader must start afresh.
   */
  onReset?: (() => void) | undefined;
  /** Stop once the server reports no new bytes, instead of polling (for a finished file). */
  untilEnd?: boolean | undefined;
}

const DEFAULT_POLL_MS = 1000;
const CONTENT_RANGE = /^bytes\s+(?:(\d+)-(\d+)|\*)\/(\d+|\*)$/i;

/**
 * Yields the bytes of the resource at `url` as it grows, asking for `Range: bytes=OFFSET-`.
 *
 * 206 delivers the new bytes; 416 means nothing new (or a shorter resource: reset); 200
 * (a server without range support) delivers the whole resource, of which the bytes
 * before the offset are skipped; 404 means not there yet. Network errors and 5xx are
 * retried at the poll interval; other statuses throw.
 */
export async function* fromFetch(url: string | URL, options: FromFetchOptions = {}): AsyncGenerator<Uint8Array, void, undefined> {
  const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  const pollMs = options.pollIntervalMs ?? DEFAULT_POLL_MS;
  const signal = options.signal;
  let offset = options.offset ?? 0;
  while (!isAborted(signal)) {
    let response: Response;
    try {
      response = await fetchImpl(url, {
        headers: { ...options.headers, Range: `bytes=${offset}-` },
        cache: "no-store",
        signal: signal ?? null,
      });
    } catch (error) {
      if (isAborted(signal)) return;
      if (!(error instanceof TypeError)) throw error; // fetch's network failure is a TypeError
      if (!(await sleep(pollMs, signal))) return;
      continue;
    }
    let received = 0;
    if (response.status === 206) {
      const range = parseContentRange(response.headers.get("Content-Range"));
      if (range.start !== undefined && range.start !== offset) {
        await response.body?.cancel();
        throw new Error(`asked for bytes from ${offset}, the server sent them from ${range.start}`);
      }
      for await (const chunk of bodyChunks(response)) {
        received += chunk.length;
        offset += chunk.length;
        yield chunk;
      }
    } else if (response.status === 200) {
      // No range support: the whole resource again. Shorter than the offset: it restarted.
      let skip = offset;
      const length = Number(response.headers.get("Content-Length") ?? Number.NaN);
      if (Number.isFinite(length) && length < offset) {
        options.onReset?.();
        offset = skip = 0;
      }
      for await (const chunk of bodyChunks(response)) {
        const fresh = skip >= chunk.length ? undefined : chunk.subarray(skip);
        skip = Math.max(0, skip - chunk.length);
        if (fresh !== undefined) {
          received += fresh.length;
          offset += fresh.length;
          yield fresh;
        }
      }
      if (skip > 0) {
        // The body was shorter than the offset after all (no Content-Length was sent).
        options.onReset?.();
        offset = 0;
        continue;
      }
    } else if (response.status === 416) {
      await response.body?.cancel();
      const { total } = parseContentRange(response.headers.get("Content-Range"));
      if (total !== undefined && total < offset) {
        options.onReset?.();
        offset = 0;
        continue;
      }
    } else if (response.status === 404 || response.status >= 500) {
      await response.body?.cancel();
    } else {
      await response.body?.cancel();
      throw new Error(`GET ${String(url)}: HTTP ${response.status}`);
    }
    if (received > 0) continue; // more may be waiting: ask again before sleeping
    if (options.untilEnd === true && response.status !== 404 && response.status < 500) return;
    if (!(await sleep(pollMs, signal))) return;
  }
}

// A function, so that TypeScript does not keep the loop condition's narrowing.
function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
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

async function* bodyChunks(response: Response): AsyncGenerator<Uint8Array, void, undefined> {
  if (response.body === null) return;
  const reader = response.body.getReader();
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        finished = true;
        return;
      }
      if (value.length > 0) yield value;
    }
  } finally {
    // The consumer stopped early: close the connection instead of leaving it open.
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
