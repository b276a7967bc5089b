#!/usr/bin/env node
// The conformance harness (the protocol of schemas/harness/v1): NDJSON requests on
// stdin, one response line each on stdout. This package is a reader, not a writer.
import { createInterface } from "node:readline";
import { canonicalStringify } from "../canonical.js";
import { StreamReader } from "../reader.js";
import { VERSION } from "../version.js";

const IMPLEMENTATION = {
  name: "trainwire-ts",
  language: "typescript",
  version: VERSION,
  homepage: "https://trainwire.dev",
};

type Request = Record<string, unknown>;

/** The response to one request, or `undefined` for `stop`. */
function respond(request: Request): Record<string, unknown> | undefined {
  const seq = request["seq"];
  switch (request["cmd"]) {
    case "start":
      return { version: 1, implementation: IMPLEMENTATION, roles: ["reader"] };
    case "read":
      return { seq, state: read(request) };
    case "write":
      return { seq, skipped: true, message: "trainwire-ts is a reader only; it has no writer" };
    case "stop":
      return undefined;
    default:
      throw new Error(`unknown cmd ${JSON.stringify(request["cmd"])}`);
  }
}

function read(request: Request): unknown {
  const chunks = request["chunks"];
  if (!Array.isArray(chunks) || !chunks.every((chunk) => typeof chunk === "string")) {
    throw new TypeError("read: chunks must be a list of base64 strings");
  }
  const reader = new StreamReader();
  for (const chunk of chunks) reader.feed(Buffer.from(chunk, "base64"));
  const now = request["now"];
  const staleAfterS = request["stale_after_s"];
  return reader.toState({
    now: typeof now === "string" ? now : undefined,
    staleAfterS: typeof staleAfterS === "number" ? staleAfterS : undefined,
  });
}

function errored(seq: unknown, error: unknown): Record<string, unknown> {
  const message = error instanceof Error ? error.message : String(error);
  const traceback = error instanceof Error && error.stack !== undefined ? error.stack : message;
  return { seq: seq ?? null, errored: true, context: { message, traceback } };
}

async function main(): Promise<void> {
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim() === "") continue;
    let request: Request | undefined;
    let response: Record<string, unknown> | undefined;
    try {
      const parsed: unknown = JSON.parse(line);
      if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed))
        throw new TypeError("a request is a JSON object");
      request = parsed as Request;
      response = respond(request);
      if (response === undefined) break;
    } catch (error) {
      response = errored(request?.["seq"], error);
    }
    process.stdout.write(`${canonicalStringify(response)}\n`);
  }
  lines.close();
}

await main();
