// A conformance harness template for a TypeScript reader (schemas/harness/v1): NDJSON
// requests on stdin, one response line each on stdout. Replace `readState` with your own
// reader; here it is the `trainwire` npm package's StreamReader, which passes every case.
// Run: trainwire conformance run --harness "node reader_harness.js"
import { createInterface } from "node:readline";
import { StreamReader, canonicalStringify } from "trainwire";

type Request = { cmd: string; seq?: unknown; chunks?: string[]; now?: string; stale_after_s?: number };

const IMPLEMENTATION = { name: "my-reader", language: "typescript", version: "0.0.1" };

/** The reader state (schemas/reader-state/v1) of the stream sent in `chunks`. */
function readState(chunks: string[], now?: string, staleAfterS?: number): unknown {
  const reader = new StreamReader();
  for (const chunk of chunks) reader.feed(Buffer.from(chunk, "base64"));
  return reader.toState({ now, staleAfterS });
}

function respond(request: Request): object | undefined {
  switch (request.cmd) {
    case "start":
      return { version: 1, implementation: IMPLEMENTATION, roles: ["reader"] };
    case "read":
      return { seq: request.seq, state: readState(request.chunks ?? [], request.now, request.stale_after_s) };
    case "write":
      return { seq: request.seq, skipped: true, message: "a reader only" };
    default:
      return undefined; // "stop"
  }
}

for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  if (line.trim() === "") continue;
  let request: Request | undefined;
  let response: object | undefined;
  try {
    request = JSON.parse(line) as Request;
    response = respond(request);
    if (response === undefined) break;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    response = { seq: request?.seq ?? null, errored: true, context: { message, traceback: message } };
  }
  process.stdout.write(canonicalStringify(response) + "\n");
}
