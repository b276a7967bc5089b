// Ask a run to stop cleanly: the control file of docs/stop.md.
import { randomBytes } from "node:crypto";
import { open, rename, stat, unlink, writeFile } from "node:fs/promises";
import path from "node:path";

/** The control file a trainer checks at step ends and phase boundaries. */
export const STOP_FILE = ".trainwire-stop";

/** @deprecated The same constant under its old name: use `STOP_FILE` (the Python name too). */
export const STOP_FILE_NAME = STOP_FILE;

/** `stop.requested.reason` and `requested_by` hold at most this many characters. */
const MAX_TEXT_CHARS = 200;

export interface RequestStopOptions {
  /** Why the run should stop; it appears in the run's `stop.requested`. */
  reason?: string | null | undefined;
  /** Who asks (a user, a service). */
  requestedBy?: string | null | undefined;
}

/**
 * Writes `<outputDir>/.trainwire-stop` atomically (a temporary file, then a rename), so
 * the trainer never reads a half-written body. Returns the control file's path.
 * The directory must exist: a mistyped path fails instead of stopping nothing.
 */
export async function requestStop(outputDir: string, options: RequestStopOptions = {}): Promise<string> {
  const target = path.join(outputDir, STOP_FILE);
  const body: Record<string, string> = {};
  const reason = clip(options.reason);
  const requestedBy = clip(options.requestedBy);
  if (reason) body["reason"] = reason;
  if (requestedBy) body["requested_by"] = requestedBy;
  const temporary = path.join(outputDir, `${STOP_FILE}.${randomBytes(8).toString("hex")}.tmp`);
  await writeFile(temporary, JSON.stringify(body), { encoding: "utf8", flag: "wx" });
  try {
    await rename(temporary, target);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
  return target;
}

/** Like the Python helper: empty values are left out, long ones cut to 200 characters. */
function clip(value: string | null | undefined): string | undefined {
  return value ? Array.from(value).slice(0, MAX_TEXT_CHARS).join("") : undefined;
}

/** The stream file a run writes into its output directory (docs/stop.md). */
const STREAM_FILE = "progress.jsonl";
/** How far back from the end of the stream the latest run is looked for: a huge or hostile stream is never read whole. */
const LOOK_BACK_BYTES = 4 << 20;
const STEP_LOOK_BACK_BYTES = 1 << 20;
const POLL_MS = 50;

export interface RequestStopAndWaitOptions extends RequestStopOptions {
  /** How long to wait for a run to acknowledge the request, in milliseconds (default 30 000). */
  timeoutMs?: number;
}

/** What became of a stop request, as `trainwire stop` reports it (Python's `StopOutcome`). */
export interface StopOutcome {
  /** The control file's path. */
  path: string;
  /** Whether a run acknowledged it: a `stop.requested` written into the stream after the request. */
  acknowledged: boolean;
  /** The run that acknowledged it. */
  runId: string | null;
  /** That run's last step before it. */
  step: number | null;
  /** Why no run acknowledged it (the request then stays pending), from what the stream's latest run says. */
  why: string | null;
}

/**
 * `requestStop`, then waits up to `timeoutMs` for a run to acknowledge the request (a
 * `stop.requested` in `<outputDir>/progress.jsonl` after it). A request no run acknowledged
 * stays pending: a run that starts there honours it. The same semantics as Python's
 * `request_stop_and_wait` and `trainwire stop`.
 */
export async function requestStopAndWait(
  outputDir: string,
  options: RequestStopAndWaitOptions = {},
): Promise<StopOutcome> {
  const stream = path.join(outputDir, STREAM_FILE);
  const offset = await sizeOf(stream);
  const target = await requestStop(outputDir, options);
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  for (;;) {
    const found = acknowledgement(await linesOf(stream, Math.max(0, offset - STEP_LOOK_BACK_BYTES)), offset);
    if (found !== null) return { path: target, acknowledged: true, runId: found.runId, step: found.step, why: null };
    if (Date.now() >= deadline)
      return { path: target, acknowledged: false, runId: null, step: null, why: await whyPending(stream, target) };
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

type Positioned = [position: number, line: Record<string, unknown>];

async function sizeOf(file: string): Promise<number> {
  try {
    return (await stat(file)).size;
  } catch {
    return 0;
  }
}

/** The complete lines from byte `start` that are JSON objects, with their positions; a line cut by the start is dropped. */
async function linesOf(stream: string, start: number): Promise<Positioned[]> {
  let raw: Buffer;
  const position = Math.max(start, (await sizeOf(stream)) - LOOK_BACK_BYTES);
  try {
    const handle = await open(stream, "r");
    try {
      const buffer = Buffer.alloc(LOOK_BACK_BYTES);
      const { bytesRead } = await handle.read(buffer, 0, LOOK_BACK_BYTES, position);
      raw = buffer.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
  } catch {
    return [];
  }
  const found: Positioned[] = [];
  const cut = position > 0;
  let from = 0;
  for (let end = raw.indexOf(10); end !== -1; end = raw.indexOf(10, from)) {
    if (!(cut && from === 0)) {
      try {
        const value: unknown = JSON.parse(raw.subarray(from, end).toString("utf8"));
        if (value !== null && typeof value === "object" && !Array.isArray(value))
          found.push([position + from, value as Record<string, unknown>]);
      } catch {
        // not a line of the stream: skipped
      }
    }
    from = end + 1;
  }
  return found;
}

function acknowledgement(lines: Positioned[], offset: number): { runId: string | null; step: number | null } | null {
  const steps = new Map<unknown, number>();
  for (const [position, line] of lines) {
    if (line["event"] === "train.step" && Number.isInteger(line["step"]))
      steps.set(line["run_id"], line["step"] as number);
    else if (line["event"] === "stop.requested" && position >= offset) {
      const runId = typeof line["run_id"] === "string" ? line["run_id"] : null;
      return { runId, step: steps.get(line["run_id"]) ?? null };
    }
  }
  return null;
}

async function whyPending(stream: string, target: string): Promise<string> {
  try {
    await stat(target);
  } catch {
    return "the control file was taken (removed) by a process that wrote no stop.requested into this directory's stream";
  }
  let started: Record<string, unknown> | null = null;
  let finished: Record<string, unknown> | null = null;
  for (const [, line] of await linesOf(stream, 0)) {
    if (line["event"] === "run.started") {
      started = line;
      finished = null;
    } else if (line["event"] === "run.finished" && started !== null && line["run_id"] === started["run_id"]) {
      finished = line;
    }
  }
  if (started === null) return `no run has started there yet (${STREAM_FILE} has no run.started)`;
  const runId = String(started["run_id"]);
  if (finished !== null)
    return `the latest run there (${runId}) already finished (${String(finished["status"])}): no live run`;
  const channels = started["stop_channels"];
  if (!Array.isArray(channels))
    return `the latest run (${runId}) did not declare what it listens to (no stop_channels in run.started): it may not watch the control file (a Run outside a \`with\` block, another writer), or it has not reached a step end within the wait`;
  if (!channels.includes("control_file"))
    return `the latest run (${runId}) does not listen to the control file (stop_channels: ${channels.map(String).join(", ") || "none"})`;
  return `the latest run (${runId}) listens to the control file but has not reached a step end or phase boundary within the wait (a long step?), or its process is gone`;
}
