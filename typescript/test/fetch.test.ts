// fromFetch against a real local HTTP server: 206, 416, 200 without range support, 404, resets.
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import { fromFetch } from "trainwire/browser";

/** A server whose resource is `content.body` (undefined: 404), with or without range support. */
async function withServer(content: { body?: string; ranges: boolean; seen: string[] }, test: (url: string) => Promise<void>): Promise<void> {
  const server: Server = createServer((request, response) => {
    content.seen.push(request.headers.range ?? "none");
    if (content.body === undefined) return void response.writeHead(404).end();
    const bytes = Buffer.from(content.body);
    const start = Number(/^bytes=(\d+)-$/.exec(request.headers.range ?? "")?.[1] ?? Number.NaN);
    if (!content.ranges || Number.isNaN(start)) return void response.writeHead(200, { "Content-Length": bytes.length }).end(bytes);
    if (start >= bytes.length) return void response.writeHead(416, { "Content-Range": `bytes */${bytes.length}` }).end();
    response.writeHead(206, { "Content-Range": `bytes ${start}-${bytes.length - 1}/${bytes.length}` }).end(bytes.subarray(start));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    await test(`http://127.0.0.1:${(server.address() as AddressInfo).port}/progress.jsonl`);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

const decode = (chunks: Uint8Array[]): string => Buffer.concat(chunks).toString("utf8");

describe("fromFetch", () => {
  it("asks for the bytes after its offset, waits out 404 and 416, and resets when the file shrinks", async () => {
    const content: { body?: string; ranges: boolean; seen: string[] } = { ranges: true, seen: [] };
    await withServer(content, async (url) => {
      let resets = 0;
      const iterator = fromFetch(url, { pollIntervalMs: 5, offset: 2, onReset: () => (resets += 1) })[Symbol.asyncIterator]();
      const first = iterator.next(); // 404 until the file is there
      setTimeout(() => (content.body = "abcdef"), 30);
      assert.equal(decode([(await first).value as Uint8Array]), "cdef");
      const second = iterator.next(); // 416 (nothing new) until it grows
      setTimeout(() => (content.body = "abcdefgh"), 30);
      assert.equal(decode([(await second).value as Uint8Array]), "gh");
      content.body = "xy"; // replaced by a shorter file: 416 with a smaller size
      assert.equal(decode([(await iterator.next()).value as Uint8Array]), "xy");
      assert.equal(resets, 1);
      await iterator.return(undefined);
      assert.ok(content.seen.includes("bytes=2-") && content.seen.includes("bytes=6-") && content.seen.includes("bytes=8-"), content.seen.join(" "));
    });
  });

  it("skips the bytes it has when the server ignores Range (200)", async () => {
    const content = { body: "0123456789", ranges: false, seen: [] as string[] };
    await withServer(content, async (url) => {
      const chunks: Uint8Array[] = [];
      for await (const chunk of fromFetch(url, { offset: 4, untilEnd: true })) chunks.push(chunk);
      assert.equal(decode(chunks), "456789");
    });
  });

  it("stops when the signal aborts, and throws on an unexpected status", async () => {
    const abort = new AbortController();
    const content = { ranges: true, seen: [] as string[] };
    await withServer(content, async (url) => {
      setTimeout(() => abort.abort(), 30);
      const chunks: Uint8Array[] = [];
      for await (const chunk of fromFetch(url, { pollIntervalMs: 5, signal: abort.signal })) chunks.push(chunk);
      assert.equal(chunks.length, 0);
      assert.ok(content.seen.length >= 1);
    });
    const forbidden = async (): Promise<Response> => new Response("no", { status: 403 });
    await assert.rejects(async () => {
      for await (const chunk of fromFetch("http://127.0.0.1:9/x", { fetch: forbidden })) void chunk;
    }, /HTTP 403/);
  });
});
