// The package as users get it: npm pack, install the tarball into a scratch project, import all entries.
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, it } from "node:test";
import { promisify } from "node:util";
import { PACKAGE_DIR, tempDir } from "./helpers.js";

const run = promisify(execFile);
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

/** Run `command`, write `input` to its stdin and return its stdout once it exits 0. */
function runWithInput(command: string, input: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, [], { stdio: ["pipe", "pipe", "inherit"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0 ? resolve(output) : reject(new Error(`${command} exited ${code}: ${output}`)),
    );
    child.stdin.end(input);
  });
}

const USE_ALL_ENTRIES = `
import { StreamReader, canonicalStringify, validateLine, VERSION } from "trainwire";
import { followFile, fromReadable, requestStop } from "trainwire/node";
import { fromFetch } from "trainwire/browser";
import type { Line, ReaderState } from "trainwire";

const line = '{"schema_version":1,"seq":1,"ts":"2026-11-29T10:00:00.000000Z","run_id":"r1","event":"phase.started","phase":"train"}\\n';
// A server with range support, in memory: 206 with the bytes from the offset, 416 past the end.
const fakeFetch = async (_url: unknown, init?: RequestInit): Promise<Response> => {
  const range = new Headers(init?.headers).get("Range") ?? "";
  const start = Number(/bytes=(\\d+)-/.exec(range)?.[1] ?? 0);
  return start >= line.length
    ? new Response(null, { status: 416, headers: { "Content-Range": \`bytes */\${line.length}\` } })
    : new Response(line.slice(start), { status: 206, headers: { "Content-Range": \`bytes \${start}-\${line.length - 1}/\${line.length}\` } });
};
const reader = new StreamReader();
for await (const chunk of fromFetch("http://example.invalid/progress.jsonl", { fetch: fakeFetch, untilEnd: true })) reader.feed(chunk);
for await (const chunk of fromReadable([new TextEncoder().encode(line.replace('"seq":1', '"seq":2'))])) reader.feed(chunk);
const state: ReaderState = reader.toState();
const parsed: unknown = JSON.parse(line);
const phase = validateLine(parsed) && parsed.event === "phase.started" ? parsed.phase : "no";
const stopFile = await requestStop(process.argv[2] ?? ".", { reason: "packed" });
const abort = new AbortController();
for await (const chunk of followFile(stopFile, { signal: abort.signal })) { if (chunk.length > 0) abort.abort(); }
const first: Line | undefined = undefined;
console.log(canonicalStringify({ version: VERSION, phase, events: state.runs[0]?.events, stopFile: stopFile.endsWith(".trainwire-stop"), first: first ?? null }));
`;

describe("pack and import", () => {
  it("installs from the tarball and works through trainwire, trainwire/node and trainwire/browser", async () => {
    const { dir, remove } = await tempDir("trainwire-pack-");
    try {
      const { stdout } = await run(npm, ["pack", "--json", "--pack-destination", dir], { cwd: PACKAGE_DIR });
      const [packed] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
      assert.ok(packed !== undefined);
      const files = packed.files.map((file) => file.path);
      assert.ok(
        files.includes("dist/generated/validate-line.js") &&
          files.includes("dist/node.d.ts") &&
          files.includes("dist/bin/harness.js"),
      );
      assert.ok(
        !files.some((file) => file.startsWith("dist/test/") || file.startsWith("src/") || file.startsWith("test/")),
        files.join(" "),
      );
      assert.ok(files.includes("README.md") && files.includes("LICENSE"), files.join(" "));

      const project = path.join(dir, "scratch");
      await run("mkdir", [project]);
      await writeFile(
        path.join(project, "package.json"),
        JSON.stringify({ name: "scratch", private: true, type: "module" }),
      );
      await run(npm, ["install", "--offline", "--no-audit", "--no-fund", path.join(dir, packed.filename)], {
        cwd: project,
      });
      assert.deepEqual(await readdir(path.join(project, "node_modules")), [".bin", ".package-lock.json", "trainwire"]); // no runtime dependency; .bin holds the harness

      // Type-check against the installed declarations, as a strict NodeNext user would.
      await writeFile(path.join(project, "use.ts"), USE_ALL_ENTRIES);
      const tsc = path.join(PACKAGE_DIR, "node_modules/typescript/bin/tsc");
      await run(
        process.execPath,
        [
          tsc,
          "--pretty",
          "false",
          "--strict",
          "--exactOptionalPropertyTypes",
          "--noUncheckedIndexedAccess",
          "--module",
          "NodeNext",
          "--moduleResolution",
          "NodeNext",
          "--target",
          "ES2022",
          "--lib",
          "ES2022,DOM,DOM.Iterable",
          "--typeRoots",
          path.join(PACKAGE_DIR, "node_modules/@types"),
          "--types",
          "node",
          "use.ts",
        ],
        { cwd: project },
      );
      const { stdout: output } = await run(process.execPath, ["use.js", project], { cwd: project });
      assert.deepEqual(JSON.parse(output), {
        version: "0.1.0",
        phase: "train",
        events: 2,
        stopFile: true,
        first: null,
      });

      // CommonJS: the `require` condition loads the same ES modules (Node's require(esm)).
      await writeFile(
        path.join(project, "use.cjs"),
        'const { StreamReader } = require("trainwire"); const { requestStop } = require("trainwire/node"); console.log(typeof StreamReader, typeof requestStop);',
      );
      const { stdout: required } = await run(process.execPath, ["use.cjs"], { cwd: project });
      assert.equal(required.trim(), "function function");

      // The harness bin answers the protocol's `start` like `node dist/bin/harness.js`.
      const manifest = JSON.parse(
        await readFile(path.join(project, "node_modules/trainwire/package.json"), "utf8"),
      ) as Record<string, unknown>;
      assert.equal(manifest["homepage"], undefined);
      const harness = await runWithInput(
        path.join(project, "node_modules/.bin/trainwire-harness"),
        '{"seq":1,"cmd":"start","version":1}\n{"seq":2,"cmd":"stop"}\n',
      );
      assert.match(harness, /"roles":\["reader"\]/);
    } finally {
      await remove();
    }
  });
});
