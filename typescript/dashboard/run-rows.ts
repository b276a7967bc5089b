// The rows of the runs list as the page uses them, checked field by field: whatever a server,
// an old server or a proxy sends, a field of the wrong type is blanked, a row without a key is
// dropped, and one bad row never costs the others (docs/dashboard.md, safety).
import { validateRunVerdict } from "../src/generated/validate-verdict.js";
import type { RunVerdict } from "../src/types.js";
import { statusText } from "../src/verdict.js";
import { isNumber, isRecord } from "./checks.js";

export interface RunRow {
  /** The run's folder under the served directory: the row's identity, never blank. */
  key: string;
  run_id: string;
  /** `run.started.name`, or null. */
  name: string | null;
  /** `run.started.tags`: strings only (an older server sends none: empty). */
  tags: string[];
  /** The status as the run's verdict words it (`stale (process gone)`); `null` when the server sent none the page can show. */
  status: string | null;
  /** The run's verdict (schemas/verdict) as the server judged it: the page derives none of its own; null from an older server. */
  verdict: RunVerdict | null;
  step: number | null;
  total_steps: number | null;
  duration_s: number | null;
  last_loss: number | null;
  best_loss: number | null;
  git_sha: string | null;
  started_at: string | null;
  /** The run's config, flattened to dotted names; a Map, so a key like `constructor` is only data. */
  config: ReadonlyMap<string, unknown>;
  notes: string | null;
}

/** A status is also a CSS class of its badge: only a plain word is one. */
export const STATUS_WORD = /^[a-z_]{1,32}$/;

/** A page of the runs list as the server answers `/api/runs` (docs/dashboard.md), checked. */
export interface RunsPage {
  rows: RunRow[];
  /** How many runs the filter keeps, this page's rows among them. */
  total: number;
  /** Where this page starts among them. */
  offset: number;
  /** True while the server has not yet read every run it found: more may come. */
  scanning: boolean;
  /** Every config key of the runs: what the config-columns picker offers. */
  configKeys: string[];
}

/** The page of `answer` (the parsed `/api/runs`), checked; undefined when it is not a page at all. */
export function checkedPage(answer: unknown): RunsPage | undefined {
  if (!isRecord(answer)) return undefined;
  const rows = checkedRows(answer["rows"]);
  if (rows === undefined) return undefined;
  const total = answer["total"];
  const offset = answer["offset"];
  const keys = answer["config_keys"];
  return {
    rows,
    total: Number.isSafeInteger(total) && (total as number) >= rows.length ? (total as number) : rows.length,
    offset: Number.isSafeInteger(offset) && (offset as number) >= 0 ? (offset as number) : 0,
    scanning: answer["scanning"] === true,
    configKeys: Array.isArray(keys) ? keys.filter((key): key is string => typeof key === "string") : [],
  };
}

/** The rows of a page's `rows`, checked; undefined when it is not a list at all. */
export function checkedRows(answer: unknown): RunRow[] | undefined {
  if (!Array.isArray(answer)) return undefined;
  const seen = new Set<string>();
  const rows: RunRow[] = [];
  for (const found of answer) {
    const row = checkedRow(found);
    // a directory lists each of its runs under its key: the same run twice would pick and sort as one
    const identity = row === undefined ? "" : `${row.key}\n${row.run_id}`;
    if (row === undefined || seen.has(identity)) continue;
    seen.add(identity);
    rows.push(row);
  }
  return rows;
}

/** One row, its fields of the wrong type blanked; undefined without a key to open it by. */
export function checkedRow(found: unknown): RunRow | undefined {
  if (!isRecord(found) || typeof found["key"] !== "string" || found["key"] === "") return undefined;
  const startedAt = textOrNull(found["started_at"]);
  const verdict = validateRunVerdict(found["verdict"]) ? found["verdict"] : null;
  return {
    key: found["key"],
    run_id: textOrNull(found["run_id"]) ?? "",
    name: textOrNull(found["name"]),
    tags: Array.isArray(found["tags"]) ? found["tags"].filter((tag): tag is string => typeof tag === "string") : [],
    status: verdict !== null ? statusText(verdict) : textOrNull(found["status"]),
    verdict,
    step: numberOrNull(found["step"]),
    total_steps: numberOrNull(found["total_steps"]),
    duration_s: numberOrNull(found["duration_s"]),
    last_loss: numberOrNull(found["last_loss"]),
    best_loss: numberOrNull(found["best_loss"]),
    git_sha: textOrNull(found["git_sha"]),
    started_at: startedAt !== null && Number.isFinite(Date.parse(startedAt)) ? startedAt : null,
    config: isRecord(found["config"]) ? new Map(Object.entries(found["config"])) : new Map(),
    notes: textOrNull(found["notes"]),
  };
}

/** The column names the user picked, as saved in the browser: a list of names, or nothing. */
export function checkedNames(saved: string | null): string[] {
  try {
    const names: unknown = JSON.parse(saved ?? "[]");
    return Array.isArray(names) ? names.filter((name): name is string => typeof name === "string") : [];
  } catch {
    return [];
  }
}

function textOrNull(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

function numberOrNull(value: unknown): number | null {
  return isNumber(value) ? value : null;
}
