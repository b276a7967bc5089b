// A local HTTP server that serves one growing resource the way static file servers do:
// Range requests, ETag, 404 while missing; plus the faults a real deployment shows.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";

export interface RangeResource {
  /** The resource's bytes; undefined answers 404. */
  body?: Uint8Array | undefined;
  /** Counted into the ETag: bump it when the resource is replaced. */
  version: number;
  /** Honour `Range` (else always 200 with the whole body). */
  ranges: boolean;
  /** Send an ETag. */
  etag: boolean;
  /** Statuses to answer the next requests with, one each (a 500 burst). */
  faults: number[];
  /** Send the body gzip-compressed with `Content-Encoding: gzip`. */
  gzip: boolean;
  /** Send only this many bytes of the next body, then keep the connection open (a stalled transfer). */
  stallAfter?: number | undefined;
  /** Send only this many bytes of the next body, then drop the connection (a transfer cut short). */
  cutAfter?: number | undefined;
  /** `Range` header of every request for the resource ("none" without one). */
  seen: string[];
  /** Body bytes sent in each answer. */
  sent: number[];
  /** Request headers of the last request. */
  lastHeaders?: IncomingMessage["headers"];
}

export function resource(fields: Partial<RangeResource> = {}): RangeResource {
  return { version: 1, ranges: true, etag: true, faults: [], gzip: false, seen: [], sent: [], ...fields };
}

/** Other paths the server answers with fixed content (a page, its script). */
export type StaticFiles = Record<string, { type: string; body: string }>;

export async function withRangeServer(
  stream: RangeResource,
  test: (origin: string) => Promise<void>,
  files: StaticFiles = {},
): Promise<void> {
  const server: Server = createServer((request, response) => {
    const file = files[request.url ?? ""];
    if (file !== undefined) {
      send(response, 200, { "Content-Type": file.type }, file.body);
      return;
    }
    if (request.url !== "/progress.jsonl") {
      send(response, 404, {}, "");
      return;
    }
    answer(stream, request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    await test(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    server.closeAllConnections(); // a stalled transfer must not keep the server open
    await new Promise((resolve) => server.close(resolve));
  }
}

function answer(stream: RangeResource, request: IncomingMessage, response: ServerResponse): void {
  const range = request.headers.range;
  stream.seen.push(range ?? "none");
  stream.lastHeaders = request.headers;
  const fault = stream.faults.shift();
  if (fault !== undefined) {
    send(response, fault, {}, "");
    return;
  }
  const body = stream.body;
  if (body === undefined) {
    send(response, 404, {}, "");
    return;
  }
  const headers: Record<string, string> = { "Content-Type": "application/x-ndjson", "Accept-Ranges": "bytes" };
  if (stream.etag) headers["ETag"] = `"${stream.version}-${body.length}"`;
  const match = range === undefined || !stream.ranges ? null : /^bytes=(\d+)-(\d*)$/.exec(range);
  if (match === null) {
    deliver(stream, response, 200, headers, body);
    return;
  }
  const start = Number(match[1]);
  const end = Math.min(body.length - 1, match[2] === "" ? Number.POSITIVE_INFINITY : Number(match[2]));
  if (start >= body.length) {
    send(response, 416, { "Content-Range": `bytes */${body.length}` }, "");
    return;
  }
  headers["Content-Range"] = `bytes ${start}-${end}/${body.length}`;
  deliver(stream, response, 206, headers, body.subarray(start, end + 1));
}

function deliver(
  stream: RangeResource,
  response: ServerResponse,
  status: number,
  headers: Record<string, string>,
  bytes: Uint8Array,
): void {
  stream.sent.push(bytes.length);
  if (stream.gzip) {
    send(response, status, { ...headers, "Content-Encoding": "gzip" }, gzipSync(bytes));
    return;
  }
  const partial = stream.stallAfter ?? stream.cutAfter;
  if (partial === undefined) {
    send(response, status, { ...headers, "Content-Length": String(bytes.length) }, bytes);
    return;
  }
  const cut = stream.cutAfter !== undefined;
  stream.stallAfter = stream.cutAfter = undefined;
  response.writeHead(status, { "Cache-Control": "no-store", ...headers, "Content-Length": String(bytes.length) });
  // Never the rest: the connection stays open (a stall) or is dropped once the part is out (a cut).
  response.write(bytes.subarray(0, partial), () => {
    if (cut) setTimeout(() => response.destroy(), 20);
  });
}

function send(
  response: ServerResponse,
  status: number,
  headers: Record<string, string>,
  body: string | Uint8Array,
): void {
  response.writeHead(status, { "Cache-Control": "no-store", ...headers });
  response.end(body);
}
