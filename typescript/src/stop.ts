// Ask a run to stop cleanly: the control file of docs/stop.md.
import { randomBytes } from "node:crypto";
import { rename, unlink, writeFile } from "node:fs/promises";
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
