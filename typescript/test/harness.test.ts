// bin/harness.js: the conformance harness protocol over a real child process's stdin/stdout.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { describe, it } from "node:test";
import {
  canonicalStringify,
  StreamReader,
  VERSION,
  validateErroredResponse,
  validateReadResponse,
  validateSkippedResponse,
  validateStartResponse,
} from "trainwire";
import { known, ndjson, PACKAGE_DIR } from "./helpers.js";

describe("the harness", () => {
  it("reports the package's version", () => {
    const manifest = JSON.parse(readFileSync(path.join(PACKAGE_DIR, "package.json"), "utf8")) as { version: string };
    assert.equal(VERSION, manifest.version);
  });

  it("answers start, read, write and errors, one line each, and exits on stop", async () => {
    const child = spawn(process.execPath, [path.join(PACKAGE_DIR, "dist/bin/harness.js")], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    const answers = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const ask = async (request: unknown): Promise<Record<string, unknown>> => {
      child.stdin.write(`${typeof request === "string" ? request : JSON.stringify(request)}\n`);
      const answer = await answers.next();
      assert.equal(answer.done, false);
      return JSON.parse(answer.value as string) as Record<string, unknown>;
    };

    const start = await ask({ cmd: "start", version: 1 });
    assert.ok(validateStartResponse(start));
    assert.deepEqual(start, {
      version: 1,
      implementation: {
        name: "trainwire-ts",
        language: "typescript",
        version: VERSION,
        homepage: "https://trainwire.dev",
      },
      roles: ["reader"],
    });

    const stream = Buffer.from(`${ndjson(known("run.started", 1), known("phase.started", 2))}{"torn":`);
    const cut = 50;
    const chunks = [stream.subarray(0, cut), stream.subarray(cut)].map((chunk) => chunk.toString("base64"));
    const now = "2030-01-01T00:00:00Z";
    const read = await ask({ cmd: "read", seq: { id: [1] }, chunks, now, stale_after_s: 60 });
    assert.ok(validateReadResponse(read), JSON.stringify(validateReadResponse.errors));
    const reader = new StreamReader();
    reader.feed(stream);
    assert.equal(
      canonicalStringify(read),
      canonicalStringify({ seq: { id: [1] }, state: reader.toState({ now, staleAfterS: 60 }) }),
    );
    assert.equal((read["state"] as { runs: { status: string }[] }).runs[0]?.status, "stale");

    const write = await ask({ cmd: "write", seq: 2, scenario: { start_time: "2026-11-29T10:00:00Z", actions: [] } });
    assert.ok(validateSkippedResponse(write));
    assert.equal(write["seq"], 2);

    const errored = await ask({ cmd: "read", seq: 3, chunks: [5] });
    assert.ok(validateErroredResponse(errored));
    assert.equal(errored["seq"], 3);
    assert.ok(validateErroredResponse(await ask("{not json")));

    child.stdin.write(`${JSON.stringify({ cmd: "stop" })}\n`);
    assert.equal(await exited, 0);
  });
});
