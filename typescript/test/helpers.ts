// Shared by the tests: paths, line builders, temporary directories.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** typescript/ (the tests run from typescript/dist/test/test/). */
export const PACKAGE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
export const REPO_ROOT = path.resolve(PACKAGE_DIR, "..");
/** The conformance suite: package data of the Python package. */
export const SUITE_DIR = path.join(REPO_ROOT, "python/src/trainwire/conformance/suite");

const encoder = new TextEncoder();

export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

let clock = 0;

/** One valid line of run `runId` (an object: tweak it before `JSON.stringify`). */
export function line(
  event: string,
  seq: number,
  fields: Record<string, unknown> = {},
  runId = "r1",
): Record<string, unknown> {
  clock += 1;
  const ts = new Date(Date.UTC(2026, 10, 29, 10, 0, 0) + clock * 1000).toISOString().replace("Z", "000Z");
  return { schema_version: 1, seq, ts, run_id: runId, event, ...fields };
}

export const PAYLOADS: Record<string, Record<string, unknown>> = {
  "run.started": { producer: { name: "test", version: "1" }, total_steps: 10, heartbeat_interval_s: 5 },
  "phase.started": { phase: "train" },
  "phase.ended": { phase: "train", status: "ok", duration_s: 1.5 },
  "train.step": {
    step: 5,
    total_steps: 10,
    epoch: 0.5,
    loss: 2.25,
    learning_rate: 0.001,
    elapsed_s: 2,
    eta_s: 2,
    progress: 0.5,
  },
  "run.finished": {
    status: "succeeded",
    exit_code: 0,
    error: null,
    reason: null,
    step: 10,
    checkpoint: null,
    duration_s: 3,
    metrics: {},
    artifacts: {},
  },
};

/** A valid line of a known event with its usual payload. */
export function known(
  event: keyof typeof PAYLOADS & string,
  seq: number,
  extra: Record<string, unknown> = {},
  runId = "r1",
): Record<string, unknown> {
  return line(event, seq, { ...PAYLOADS[event], ...extra }, runId);
}

/** NDJSON text of the given objects or raw strings, each `\n`-terminated. */
export function ndjson(...lines: (Record<string, unknown> | string)[]): string {
  return lines.map((item) => `${typeof item === "string" ? item : JSON.stringify(item)}\n`).join("");
}

/** A fresh temporary directory, removed by the returned function. */
export async function tempDir(prefix = "trainwire-ts-"): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** Collects an async iterator's items until `until` says stop (then returns the iterator). */
export async function collectUntil<T>(iterable: AsyncIterable<T>, until: (items: T[]) => boolean): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) {
    items.push(item);
    if (until(items)) break;
  }
  return items;
}
