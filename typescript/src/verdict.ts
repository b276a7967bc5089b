// The verdict of a run (schemas/verdict): the same rules as Python's trainwire.lines.verdict,
// from the same inputs (a run summary, the time it is judged at, the liveness its host
// proves). The browser has no kept steps and no proof of a process: it shows the verdict the
// server's row gives, and judges a summary itself only where it has one.
import { toTimestampUs } from "./clock.js";
import { EXIT_CODES } from "./generated/contract.js";
import type { Completeness, RunSummary, RunVerdict } from "./generated/types.js";
import { formatDuration } from "./humanize.js";
import { statusAt } from "./liveness.js";
import { printable } from "./printable.js";

export const VERDICT_VERSION = 1;
type Liveness = RunVerdict["liveness"];
/** A summary as a reader holds it (schemas/summary). */
export type VerdictInput = RunSummary;

const LOWER_IS_BETTER = ["loss", "error", "perplexity", "ppl", "wer", "cer"];
const OVER = new Set(["succeeded", "failed", "interrupted", "reverted", "awaiting_approval", "stale"]);

/** Whether the best of the series `name` is its lowest: Python's `is_lower_better`. */
export function isLowerBetter(name: string): boolean {
  const trimmed = name.toLowerCase().replace(/_+$/, "");
  return LOWER_IS_BETTER.some((suffix) => trimmed.endsWith(suffix));
}

/** The verdict of `summary`'s run judged at `nowMicros` (undefined: no clock), given its process's `liveness`. */
export function verdictOf(
  summary: VerdictInput,
  nowMicros: number | undefined,
  staleAfterS?: number,
  liveness: Liveness = "unknown",
): RunVerdict {
  const finished = summary.status !== "running";
  const lastLineAt = summary.last_line_at ?? null;
  let status: RunVerdict["status"];
  if (finished) {
    status = summary.status;
    liveness = "gone";
  } else if (liveness === "gone") status = "stale";
  else status = statusAt("running", lastLineAt, summary.heartbeat_interval_s, nowMicros, staleAfterS);
  const startedAt = summary.started_at;
  let endedAt: string | null = null;
  let endedBy: RunVerdict["ended_by"] = null;
  if (finished) [endedAt, endedBy] = [summary.finished_at, "run.finished"];
  else if (status === "stale") [endedAt, endedBy] = [lastLineAt, "last_line"];
  const exitCode = summary.exit_code ?? (finished ? (EXIT_CODES[status as keyof typeof EXIT_CODES] ?? null) : null);
  return {
    verdict_version: VERDICT_VERSION,
    run_id: summary.run_id,
    status,
    liveness,
    judged_at: nowMicros === undefined ? null : formatMicros(nowMicros),
    exit_code: finished ? exitCode : null,
    reason: summary.reason,
    step: summary.step,
    started_at: startedAt,
    ended_at: endedAt,
    ended_by: endedBy,
    duration_s: durationOf(summary, endedAt, lastLineAt, nowMicros),
    best: bestOf(summary),
    checkpoint: checkpointOf(summary),
    params: summary.trials?.best?.params ? { ...(summary.trials.best.params as RunVerdict["params"]) } : null,
    completeness: completenessOf(summary.completeness),
  };
}

/** Whether the run will write nothing more: what ends every follow. */
export function isOver(verdict: RunVerdict): boolean {
  return OVER.has(verdict.status);
}

function durationOf(
  summary: VerdictInput,
  endedAt: string | null,
  lastLineAt: string | null,
  nowMicros: number | undefined,
): number | null {
  if (summary.status !== "running" && typeof summary.duration_s === "number") return summary.duration_s;
  if (summary.started_at === null) return null;
  let until = endedAt;
  if (until === null && nowMicros === undefined) until = lastLineAt;
  const end = until !== null ? toTimestampUs(until) : nowMicros;
  if (end === undefined) return null;
  return Math.max(0, (end - toTimestampUs(summary.started_at)) / 1e6);
}

function bestOf(summary: VerdictInput): RunVerdict["best"] {
  const objective = summary.objective ?? null;
  const found: RunVerdict["best"] = {};
  for (const name of Object.keys(summary.best).sort(byCodePoint)) {
    const best = summary.best[name] as { value: number; step: number | null; trial?: number };
    const goal = objective !== null && objective.name === name ? objective.goal : isLowerBetter(name) ? "min" : "max";
    found[name] = { value: best.value, step: best.step, trial: best.trial ?? null, goal };
  }
  return found;
}

function checkpointOf(summary: VerdictInput): RunVerdict["checkpoint"] {
  if (typeof summary.checkpoint !== "string") return null;
  const from = summary.checkpoint_from;
  return { path: summary.checkpoint, source: from === "run.finished" ? "run.finished" : "checkpoint.saved" };
}

function completenessOf(completeness: Completeness | null | undefined): Completeness | null {
  if (!completeness) return null;
  return completeness.stream_lines_lost || completeness.kept_steps_lost ? { ...completeness } : null;
}

/** Python's `sorted` order of strings: by code point, not by UTF-16 unit. */
function byCodePoint(a: string, b: string): number {
  const left = [...a].map((c) => c.codePointAt(0) ?? 0);
  const right = [...b].map((c) => c.codePointAt(0) ?? 0);
  for (let i = 0; i < Math.min(left.length, right.length); i++)
    if (left[i] !== right[i]) return (left[i] ?? 0) - (right[i] ?? 0);
  return left.length - right.length;
}

/** `YYYY-MM-DDTHH:MM:SS.ffffffZ` of microseconds since the epoch (Python's `format_ts`). */
function formatMicros(micros: number): string {
  const seconds = Math.floor(micros / 1e6);
  const fraction = String(micros - seconds * 1e6).padStart(6, "0");
  return `${new Date(seconds * 1000).toISOString().slice(0, 19)}.${fraction}Z`;
}

/**
 * A trial's params by name, the first `limit`: `layers=2, lr=0.01`. JSON.parse cannot tell
 * `3` from `3.0`, so every integer-valued number is shown as an integer, which is the
 * contract's rule (an integer-valued number is an integer) and Python's output alike.
 */
export function paramsText(params: Record<string, unknown> | null | undefined, limit = 4): string {
  return Object.keys(params ?? {})
    .sort(byCodePoint)
    .slice(0, limit)
    .map((name) => `${printable(name)}=${valueText(params?.[name])}`)
    .join(", ");
}

function valueText(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : formatG(value);
  return printable(String(value));
}

/** Python's `f"{value:.6g}"` for a finite non-integer number. */
function formatG(value: number): string {
  if (value === 0) return "0";
  const exponent = Math.floor(Math.log10(Math.abs(value)));
  if (exponent < -4 || exponent >= 6) {
    const [mantissa = "", power = "0"] = value.toExponential(5).split("e");
    const trimmed = mantissa.includes(".") ? mantissa.replace(/\.?0+$/, "") : mantissa;
    const sign = power.startsWith("-") ? "-" : "+";
    return `${trimmed}e${sign}${power.replace(/^[-+]/, "").padStart(2, "0")}`;
  }
  const fixed = value.toFixed(Math.max(0, 5 - exponent));
  return fixed.includes(".") ? fixed.replace(/\.?0+$/, "") : fixed;
}

/** `stream incomplete: 6 of 6 lines lost`, `59,998 of 60,000 steps`, or "" when complete. */
export function completenessText(completeness: Completeness | null | undefined): string {
  if (!completeness) return "";
  const parts: string[] = [];
  const count = (n: number) => n.toLocaleString("en-US");
  if (completeness.stream_lines_lost)
    parts.push(
      `stream incomplete: ${count(completeness.stream_lines_lost)} of ${count(completeness.stream_lines)} lines lost`,
    );
  if (completeness.kept_steps_lost) {
    const kept = Math.max(0, completeness.steps_logged - completeness.kept_steps_lost);
    parts.push(`${count(kept)} of ${count(completeness.steps_logged)} steps`);
  }
  return parts.join(", ");
}

/** The status as every surface words it: `stale (process gone)`, `succeeded, stream incomplete: …`. */
export function statusText(verdict: RunVerdict): string {
  let status: string = verdict.status;
  if (verdict.liveness === "gone" && (status === "running" || status === "stale")) status += " (process gone)";
  else if (verdict.judged_at === null && status === "running") status += " (as of its last line)";
  const incomplete = completenessText(verdict.completeness);
  return incomplete ? `${status}, ${incomplete}` : status;
}

/** The checkpoint to resume from as every surface words it: `checkpoint ckpt/final`, or
 * `checkpoint ckpt/30 (last saved)` when no `run.finished` named it; null for none. */
export function checkpointText(checkpoint: RunVerdict["checkpoint"]): string | null {
  if (checkpoint === null) return null;
  return `checkpoint ${printable(checkpoint.path)}${checkpoint.source === "run.finished" ? "" : " (last saved)"}`;
}

/** The verdict in one line, as `trainwire tail` prints it. */
export function verdictText(verdict: RunVerdict, totalSteps: number | null = null): string {
  const parts: string[] = [];
  if (verdict.step !== null) parts.push(`step ${verdict.step}${totalSteps !== null ? `/${totalSteps}` : ""}`);
  if (verdict.duration_s !== null) parts.push(formatDuration(verdict.duration_s));
  for (const [name, best] of Object.entries(verdict.best)) {
    if (best === undefined) continue;
    parts.push(`best ${printable(name)} ${formatG(best.value)}${best.trial !== null ? ` (trial ${best.trial})` : ""}`);
  }
  const checkpoint = checkpointText(verdict.checkpoint);
  if (checkpoint !== null) parts.push(checkpoint);
  const params = paramsText(verdict.params);
  if (params) parts.push(params);
  return `${statusText(verdict)}: ${parts.join(", ") || "no steps"}`;
}
