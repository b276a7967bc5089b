// fromFetch against a real local HTTP server: ranges, idle polls, replacement, faults, retries, aborts.
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { describe, it } from "node:test";
import { FetchError, TrainwireError } from "trainwire";
import { fromFetch } from "trainwire/browser";
import { utf8 } from "./helpers.js";
import { type RangeResource, resource, withRangeServer } from "./range-server.js";

const decode = (chunks: Uint8Array[]): string => Buffer.concat(chunks).toString("utf8");

/** Runs `test` with the URL of `stream` on a fresh server. */
function serving(stream: RangeResource, test: (url: string) => Promise<void>): Promise<void> {
  return withRangeServer(stream, (origin) => test(`${origin}/progress.jsonl`));
}

async function rejection(iterable: AsyncIterable<Uint8Array>): Promise<FetchError> {
  try {
    for await (const chunk of iterable) void chunk;
  } catch (error) {
    assert.ok(error instanceof FetchError && error instanceof TrainwireError, String(error));
    return error;
  }
  assert.fail("the iteration ended without an error");
}

/** Resolves once `condition` holds, checking at each turn of the event loop. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 1));
}

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("fromFetch", () => {
  it("waits out a 404, asks for the byte before its offset so an idle poll is one byte, and resets when the file shrinks", async () => {
    const stream = resource();
    await serving(stream, async (url) => {
      let resets = 0;
      const errors: number[] = [];
      const iterator = fromFetch(url, {
        pollIntervalMs: 5,
        offset: 2,
        onReset: () => (resets += 1),
        onError: (error) => errors.push(error.status ?? 0),
      })[Symbol.asyncIterator]();
      const first = iterator.next(); // 404 until the file is there
      await until(() => errors.length > 0);
      stream.body = utf8("a\ncdef\n");
      assert.equal(decode([(await first).value as Uint8Array]), "cdef\n");
      assert.ok(
        errors.every((status) => status === 404),
        "each 404 is reported, and not fatal",
      );
      const second = iterator.next(); // idle polls until it grows
      await until(() => stream.sent.includes(1)); // an idle poll: the byte before the offset, nothing more
      stream.body = utf8("a\ncdef\ngh\n");
      assert.equal(decode([(await second).value as Uint8Array]), "gh\n");
      assert.ok(stream.seen.includes("bytes=1-") && stream.seen.includes("bytes=6-"), stream.seen.join(" "));
      stream.body = utf8("xy\n"); // replaced by a shorter file: 416
      stream.version += 1;
      assert.equal(decode([(await iterator.next()).value as Uint8Array]), "xy\n");
      assert.equal(resets, 1);
      await iterator.return(undefined);
    });
  });

  it("notices a file replaced by another of the same size (ETag) or a larger one (the byte before the offset)", async () => {
    const stream = resource({ body: utf8("one\n") });
    await serving(stream, async (url) => {
      let resets = 0;
      const iterator = fromFetch(url, { pollIntervalMs: 5, onReset: () => (resets += 1) })[Symbol.asyncIterator]();
      assert.equal(decode([(await iterator.next()).value as Uint8Array]), "one\n");
      const sameSize = iterator.next();
      await until(() => stream.sent.includes(1)); // an idle poll first
      stream.body = utf8("two\n");
      stream.version += 1;
      assert.equal(decode([(await sameSize).value as Uint8Array]), "two\n");
      assert.equal(resets, 1);
      stream.body = utf8("three, longer\n"); // the byte at offset-1 is no longer the `\n` delivered
      stream.version += 1;
      assert.equal(decode([(await iterator.next()).value as Uint8Array]), "three, longer\n");
      assert.equal(resets, 2);
      await iterator.return(undefined);
    });
  });

  it("skips the bytes it has when the server ignores Range (200), checking the byte before the offset", async () => {
    const stream = resource({ body: utf8("012\n456789"), ranges: false });
    await serving(stream, async (url) => {
      const chunks: Uint8Array[] = [];
      for await (const chunk of fromFetch(url, { offset: 4, untilEnd: true })) chunks.push(chunk);
      assert.equal(decode(chunks), "456789");
    });
  });

  it("retries a 500 burst with backoff, reporting each failure, and rejects when maxRetries runs out", async () => {
    const stream = resource({ body: utf8("ok\n"), faults: [500, 503, 500] });
    await serving(stream, async (url) => {
      const failures: [number | undefined, number][] = [];
      const chunks: Uint8Array[] = [];
      for await (const chunk of fromFetch(url, {
        pollIntervalMs: 2,
        untilEnd: true,
        maxRetries: 5,
        onError: (error, count) => failures.push([error.status, count]),
      }))
        chunks.push(chunk);
      assert.equal(decode(chunks), "ok\n");
      assert.deepEqual(failures, [
        [500, 1],
        [503, 2],
        [500, 3],
      ]);
      stream.faults.push(500, 500);
      const error = await rejection(fromFetch(url, { pollIntervalMs: 2, maxRetries: 1 }));
      assert.equal(error.status, 500);
      assert.equal(error.code, "http_status");
    });
  });

  it("rejects a 404 that outlasts maxRetries (3 by default with untilEnd), and a permanent status at once", async () => {
    const stream = resource();
    await serving(stream, async (url) => {
      const error = await rejection(fromFetch(url, { pollIntervalMs: 2, untilEnd: true }));
      assert.equal(error.status, 404);
      assert.equal(stream.seen.length, 4);
      stream.faults.push(403);
      stream.body = utf8("x\n");
      const forbidden = await rejection(fromFetch(url, { pollIntervalMs: 2 }));
      assert.equal(forbidden.status, 403);
      assert.equal(forbidden.permanent, true);
    });
  });

  it("rejects a bad URL without a request, and retries a refused connection as a network error", async () => {
    assert.equal((await rejection(fromFetch("ftp://127.0.0.1/progress.jsonl"))).code, "bad_url");
    assert.equal((await rejection(fromFetch("not a url"))).code, "bad_url");
    const port = await closedPort();
    const failures: string[] = [];
    const error = await rejection(
      fromFetch(`http://127.0.0.1:${port}/progress.jsonl`, {
        pollIntervalMs: 1,
        maxRetries: 2,
        onError: (failure) => failures.push(failure.code),
      }),
    );
    assert.equal(error.code, "network");
    assert.deepEqual(failures, ["network", "network", "network"]);
  });

  it("refuses a compressed body, whose bytes are not the file's", async () => {
    const stream = resource({ body: utf8("a\n"), gzip: true });
    await serving(stream, async (url) => {
      const error = await rejection(fromFetch(url, { untilEnd: true }));
      assert.equal(error.code, "content_encoding");
      assert.match(error.message, /Content-Encoding: gzip/);
    });
  });

  it("ends quietly when the signal aborts while waiting or in the middle of a body", async () => {
    const stream = resource();
    await serving(stream, async (url) => {
      const waiting = new AbortController();
      void until(() => stream.seen.length >= 2).then(() => waiting.abort());
      const chunks: Uint8Array[] = [];
      for await (const chunk of fromFetch(url, { pollIntervalMs: 5, signal: waiting.signal })) chunks.push(chunk);
      assert.equal(chunks.length, 0);
      stream.body = utf8("first line\nsecond line\n");
      stream.stallAfter = 11;
      const midBody = new AbortController();
      for await (const chunk of fromFetch(url, { signal: midBody.signal })) {
        chunks.push(chunk);
        midBody.abort(); // the rest of the body never comes
      }
      assert.equal(decode(chunks), "first line\n");
    });
  });

  it("goes on from the bytes delivered when a connection is cut in the middle of a body", async () => {
    const stream = resource({ body: utf8("first line\nsecond line\n"), cutAfter: 11 });
    await serving(stream, async (url) => {
      const failures: string[] = [];
      const chunks: Uint8Array[] = [];
      for await (const chunk of fromFetch(url, {
        pollIntervalMs: 1,
        untilEnd: true,
        onError: (error) => failures.push(error.code),
      }))
        chunks.push(chunk);
      assert.equal(decode(chunks), "first line\nsecond line\n");
      assert.deepEqual(failures, ["network"]);
      assert.deepEqual(stream.seen.slice(0, 2), ["bytes=0-", "bytes=10-"]);
    });
  });

  it("sends HeadersInit headers and passes RequestInit fields through", async () => {
    const stream = resource({ body: utf8("a\n") });
    await serving(stream, async (url) => {
      for await (const chunk of fromFetch(url, {
        untilEnd: true,
        headers: [["Authorization", "Bearer t"]],
        init: { credentials: "include", referrer: "" },
      }))
        void chunk;
      assert.equal(stream.lastHeaders?.["authorization"], "Bearer t");
    });
  });

  it("does not poll while the page is hidden", async () => {
    const page = Object.assign(new EventTarget(), { visibilityState: "hidden" });
    const scope = globalThis as { document?: unknown };
    scope.document = page;
    try {
      let requests = 0;
      const fake = async (): Promise<Response> => {
        requests += 1;
        return new Response("a\n", { status: 206, headers: { "Content-Range": "bytes 0-1/2" } });
      };
      const next = fromFetch("http://127.0.0.1:9/progress.jsonl", {
        fetch: fake,
        pauseWhenHidden: true,
        untilEnd: true,
      })
        [Symbol.asyncIterator]()
        .next();
      for (let turn = 0; turn < 20; turn += 1) await new Promise((resolve) => setImmediate(resolve));
      assert.equal(requests, 0);
      page.visibilityState = "visible";
      page.dispatchEvent(new Event("visibilitychange"));
      assert.equal(decode([(await next).value as Uint8Array]), "a\n");
      assert.equal(requests, 1);
    } finally {
      delete scope.document;
    }
  });
});
