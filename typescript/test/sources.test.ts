// trainwire/node: followFile on real files, fromReadable on a real child process, requestStop.
import assert from "node:assert/strict";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { appendFile, readdir, readFile, rename, stat, truncate, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, it } from "node:test";
import { StreamReader } from "trainwire";
import { followFile, fromReadable, requestStop, STOP_FILE } from "trainwire/node";
import { known, ndjson, tempDir } from "./helpers.js";

const text = (chunks: Uint8Array[]): string => Buffer.concat(chunks).toString("utf8");

/** Reads from `iterator` until the bytes received since the last call contain `expected`. */
async function receive(iterator: AsyncIterator<Uint8Array>, expected: string): Promise<string> {
  const chunks: Uint8Array[] = [];
  while (!text(chunks).includes(expected)) {
    const next = await iterator.next();
    if (next.done === true) throw new Error(`ended before ${JSON.stringify(expected)}`);
    chunks.push(next.value);
  }
  return text(chunks);
}

describe("followFile", () => {
  it("waits for the file, then follows appends, truncation and replacement", async () => {
    const { dir, remove } = await tempDir();
    const file = path.join(dir, "progress.jsonl");
    const abort = new AbortController();
    let resets = 0;
    const iterator = followFile(file, { pollIntervalMs: 10, signal: abort.signal, onReset: () => (resets += 1) })[
      Symbol.asyncIterator
    ]();
    try {
      const first = iterator.next(); // the file does not exist yet
      await writeFile(file, "one\n");
      const got = await first;
      assert.equal(got.done === true ? "" : text([got.value]), "one\n");
      await appendFile(file, "two\n");
      assert.equal(await receive(iterator, "two\n"), "two\n");

      await truncate(file, 0);
      await appendFile(file, "three\n");
      assert.equal(await receive(iterator, "three\n"), "three\n");
      assert.equal(resets, 1);

      const replacement = path.join(dir, "new.jsonl");
      await writeFile(replacement, "four\n");
      await rename(replacement, file);
      assert.equal(await receive(iterator, "four\n"), "four\n");
      assert.equal(resets, 2);
    } finally {
      abort.abort();
      assert.deepEqual(await iterator.next(), { done: true, value: undefined });
      await remove();
    }
  });

  it("resumes at an offset, reading only the bytes after it", async () => {
    const { dir, remove } = await tempDir();
    const file = path.join(dir, "progress.jsonl");
    const head = ndjson(known("run.started", 1));
    const tail = ndjson(known("phase.started", 2));
    await writeFile(file, head + tail);
    const abort = new AbortController();
    try {
      const chunks: Uint8Array[] = [];
      for await (const chunk of followFile(file, {
        offset: Buffer.byteLength(head),
        pollIntervalMs: 10,
        signal: abort.signal,
      })) {
        chunks.push(chunk);
        if (text(chunks) === tail) abort.abort();
      }
      assert.equal(text(chunks), tail);
    } finally {
      await remove();
    }
  });

  it("ends when the signal aborts while waiting", async () => {
    const { dir, remove } = await tempDir();
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 30);
    const chunks: Uint8Array[] = [];
    for await (const chunk of followFile(path.join(dir, "never.jsonl"), { pollIntervalMs: 5, signal: abort.signal }))
      chunks.push(chunk);
    assert.equal(chunks.length, 0);
    await remove();
  });
});

describe("followFile on what is not a regular file", () => {
  it("refuses a FIFO in the stream's place in one error instead of blocking in open", async () => {
    const { dir, remove } = await tempDir();
    const fifo = path.join(dir, "progress.jsonl");
    execFileSync("mkfifo", [fifo]); // no writer ever opens it: a plain open for reading waits for one for ever
    // in a child: a blocked open holds a thread of Node's pool, and its process, for ever
    const script = `
      import { followFile } from "trainwire/node";
      try {
        for await (const chunk of followFile(${JSON.stringify(fifo)}, { pollIntervalMs: 5 })) void chunk;
      } catch (error) {
        process.stdout.write(error.name + ": " + error.message);
      }`;
    try {
      const done = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
        cwd: process.cwd(),
        encoding: "utf8",
        timeout: 60_000, // the guard: a follower blocked on the FIFO fails the test instead of hanging it
        killSignal: "SIGKILL",
      });
      assert.equal(done.signal, null, "followFile blocked on the FIFO");
      assert.equal(done.stdout, `NotARegularFile: ${fifo}: not a regular file`);
    } finally {
      await remove();
    }
  });
});

describe("fromReadable", () => {
  it("reads a child process's stdout into a reader, byte offsets exact", async () => {
    const lines = [
      known("run.started", 1),
      known("phase.started", 2, { x_note: "évaluation" }),
      known("run.finished", 3),
    ];
    // The child writes one line at a time, a multi-byte character split between two writes.
    const script = `
      const lines = ${JSON.stringify(lines.map((item) => `${JSON.stringify(item)}\n`))};
      const bytes = Buffer.from(lines.join(""));
      const cut = bytes.indexOf(Buffer.from("é")) + 1;
      process.stdout.write(bytes.subarray(0, cut));
      setTimeout(() => process.stdout.write(bytes.subarray(cut)), 20);
    `;
    const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
    const reader = new StreamReader();
    for await (const chunk of fromReadable(child.stdout)) reader.feed(chunk);
    const state = reader.toState();
    assert.deepEqual(state.diagnostics, []);
    assert.equal(state.consumed_bytes, Buffer.byteLength(ndjson(...lines)));
    assert.equal(state.runs[0]?.status, "succeeded");
  });

  it("accepts a stream that yields strings", async () => {
    const reader = new StreamReader();
    async function* strings(): AsyncGenerator<string> {
      yield ndjson(known("phase.started", 1, { x_note: "日本" }));
    }
    for await (const chunk of fromReadable(strings())) reader.feed(chunk);
    assert.equal(
      reader.toState().consumed_bytes,
      Buffer.byteLength(ndjson(known("phase.started", 1, { x_note: "日本" }))),
    );
    assert.equal(reader.toState().runs[0]?.phase, "train");
  });
});

describe("requestStop", () => {
  it("writes the control file atomically, with the Python helper's body", async () => {
    const { dir, remove } = await tempDir();
    try {
      const written = await requestStop(dir, { reason: "r".repeat(300), requestedBy: "dashboard" });
      assert.equal(written, path.join(dir, STOP_FILE));
      const body = JSON.parse(await readFile(written, "utf8")) as Record<string, string>;
      assert.deepEqual(body, { reason: "r".repeat(200), requested_by: "dashboard" });
      assert.deepEqual(await readdir(dir), [STOP_FILE]); // no temporary file left
      await requestStop(dir);
      assert.deepEqual(JSON.parse(await readFile(written, "utf8")), {});
    } finally {
      await remove();
    }
  });

  it("never lets a watcher see a partial file", async () => {
    const { dir, remove } = await tempDir();
    const target = path.join(dir, STOP_FILE);
    const reason = "x".repeat(150);
    // A watcher in another process polls as fast as it can while we write, 20 times.
    const watcher = spawn(
      process.execPath,
      [
        "-e",
        `
      const fs = require("node:fs");
      const seen = new Set();
      const end = Date.now() + 20000;
      while (Date.now() < end && !fs.existsSync(${JSON.stringify(path.join(dir, "done"))})) {
        try { seen.add(fs.readFileSync(${JSON.stringify(target)}, "utf8")); } catch {}
      }
      process.stdout.write(JSON.stringify([...seen]));
    `,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    try {
      for (let round = 0; round < 20; round++) {
        await requestStop(dir, { reason, requestedBy: `round ${round % 2}` });
      }
      await writeFile(path.join(dir, "done"), "");
      let output = "";
      for await (const chunk of watcher.stdout) output += String(chunk);
      const seen = JSON.parse(output) as string[];
      for (const body of seen)
        assert.ok(
          body === JSON.stringify({ reason, requested_by: "round 0" }) ||
            body === JSON.stringify({ reason, requested_by: "round 1" }),
          body,
        );
      assert.ok((await stat(target)).isFile());
    } finally {
      await remove();
    }
  });

  it("fails on a missing directory instead of creating it", async () => {
    const { dir, remove } = await tempDir();
    await assert.rejects(requestStop(path.join(dir, "typo")), { code: "ENOENT" });
    await remove();
  });
});
