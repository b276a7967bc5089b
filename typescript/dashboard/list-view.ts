// What the runs list shows: the server note in the header, the empty-list line, each row's
// cells (their texts, the status badge's class, the progress bar's width), the query that asks
// the server for a page (which rows the filter keeps, in which order: the server decides, on
// these same cell texts, `trainwire/serve/row_text.py`) and the pager's line. Every text a row
// carries goes through `printable`: a folder, sha or config value cannot reorder the page's
// text or hide characters. Pure (no DOM, no fetch): main.ts and runs-table.ts put the result on
// the page; test/list-view.test.ts checks it in node.
import { toTimestampUs } from "../src/clock.js";
import { formatDuration } from "../src/humanize.js";
import { printable } from "../src/printable.js";
import { configText, text } from "./dom.js";
import { type RunRow, type RunsPage, STATUS_WORD } from "./run-rows.js";
import type { ServerConfig } from "./server-config.js";

export const NO_TOKEN_NOTE = "the server refused this page: open the URL `trainwire serve` printed (with ?token=)";

/** How the last `GET /api/runs` went: no answer, or an HTTP status and whether its body was a list. */
export type RunsAnswer = { reached: false } | { reached: true; status: number; list: boolean };

export interface ListView {
  serverNote: string;
  emptyHidden: boolean;
}

/** The header note and the empty-list line after a poll of the runs list that left `shown` rows. */
export function listView(answer: RunsAnswer, config: ServerConfig, shown: number): ListView {
  return { serverNote: runsNote(answer, config), emptyHidden: shown > 0 };
}

function runsNote(answer: RunsAnswer, config: ServerConfig): string {
  if (!answer.reached) return "server unreachable; retrying";
  if (answer.status === 403) return NO_TOKEN_NOTE;
  const ok = answer.status >= 200 && answer.status < 300;
  if (ok && !answer.list) return "the server's runs list is not a page of runs; retrying";
  return `trainwire ${config.version}${config.read_only ? " · read-only" : ""}`;
}

/** The header note when the server's config could not be had (HTTP `status`). */
export function configRefusedNote(status: number): string {
  return status === 403 ? NO_TOKEN_NOTE : `the server answered ${status}`;
}

/** What a column sorts by: text, a number, or nothing (last in either order). */
export type SortValue = string | number | null;

/** A column of the runs list: what its cells show (and the filter matches), what it sorts by. */
export interface RunsColumn {
  id: string;
  title: string;
  shown: (row: RunRow) => string;
  sorted: (row: RunRow) => SortValue;
}

/** The column the list is sorted by, and which way. */
export interface RunsOrder {
  column: string;
  ascending: boolean;
}

/** The newest run first, until a column's head is clicked. */
export const FIRST_ORDER: RunsOrder = { column: "started_at", ascending: false };

/** A row as the list shows it: the text of each column's cell, in the columns' order, and
 * whether it continues the directory of the row above (an earlier or later run of it). */
export interface ShownRow {
  row: RunRow;
  cells: string[];
  sameFolder: boolean;
}

/** How far the run is (0 to 1), or null without a step and a total. */
function progressOf(row: RunRow): number | null {
  return row.step !== null && row.total_steps ? Math.min(row.step / row.total_steps, 1) : null;
}

/** The run's tags as the cell shows them (and the filter matches them): `baseline, fp16`. */
function tagsText(row: RunRow): string {
  return row.tags.map((tag) => printable(tag)).join(", ");
}

function durationText(seconds: number | null): string {
  return seconds === null || !Number.isFinite(seconds) ? "–" : formatDuration(seconds);
}

/** The columns every runs list has, in order; the config columns the user picks follow them. */
export const RUN_COLUMNS: readonly RunsColumn[] = [
  { id: "key", title: "folder", shown: (row) => printable(row.key), sorted: (row) => row.key },
  { id: "run_id", title: "run", shown: (row) => printable(row.run_id), sorted: (row) => row.run_id },
  { id: "name", title: "name", shown: (row) => printable(row.name ?? ""), sorted: (row) => row.name ?? null },
  { id: "tags", title: "tags", shown: tagsText, sorted: (row) => tagsText(row) || null },
  {
    id: "status",
    title: "status",
    shown: (row) => printable(row.status ?? "–").replace("_", " "),
    sorted: (row) => row.status,
  },
  {
    id: "progress",
    title: "progress",
    shown: (row) => `${text(row.step)}${row.total_steps ? `/${row.total_steps}` : ""}`,
    sorted: progressOf,
  },
  { id: "last_loss", title: "last loss", shown: (row) => text(row.last_loss), sorted: (row) => row.last_loss },
  { id: "best_loss", title: "best loss", shown: (row) => text(row.best_loss), sorted: (row) => row.best_loss },
  {
    id: "started_at",
    title: "started (UTC)",
    shown: (row) => startedText(row.started_at),
    sorted: (row) => instantOf(row.started_at),
  },
  {
    id: "duration_s",
    title: "duration",
    shown: (row) => durationText(row.duration_s),
    sorted: (row) => row.duration_s,
  },
  {
    id: "git_sha",
    title: "git sha",
    shown: (row) => printable((row.git_sha ?? "–").slice(0, 10)),
    sorted: (row) => row.git_sha,
  },
  { id: "notes", title: "notes", shown: (row) => printable(row.notes ?? ""), sorted: (row) => row.notes },
];

/** A start in UTC to the second (`2026-12-07 13:05:12`): the same text for every reader, so the
 * server's filter matches it. */
function startedText(time: string | null): string {
  const instant = instantOf(time);
  if (instant === null) return "–";
  const date = new Date(Math.floor(instant / 1_000_000) * 1000);
  return Number.isFinite(date.getTime()) ? date.toISOString().slice(0, 19).replace("T", " ") : "–";
}

/** A time by its instant (`10:00:05Z` is before `10:00:05.5Z`, unlike their texts); not a time: unsorted. */
function instantOf(time: string | null): number | null {
  if (time === null) return null;
  try {
    return toTimestampUs(time);
  } catch {
    return null;
  }
}

/** The column of config key `name` (`model.name`): the value as the run was given it. */
export function configColumn(name: string): RunsColumn {
  const value = (row: RunRow): unknown => row.config.get(name);
  return {
    id: `config:${name}`,
    title: name,
    shown: (row) => printable(configText(value(row))),
    sorted: (row) => {
      const found = value(row);
      return typeof found === "number" || typeof found === "string" ? found : found == null ? null : String(found);
    },
  };
}

/** The class of a row's status badge: the status is a class too only when it is a plain word. */
export function statusBadgeClass(status: string | null): string {
  return status !== null && STATUS_WORD.test(status) ? `badge ${status}` : "badge";
}

/** The CSS width of a row's small progress bar (`40%`; `0%` without a step and a total). */
export function progressWidth(row: RunRow): string {
  return `${Math.round((progressOf(row) ?? 0) * 100)}%`;
}

/** The rows of a page as the list shows them, in the server's order. */
export function shownRows(rows: readonly RunRow[], columns: readonly RunsColumn[]): ShownRow[] {
  return rows.map((row, index) => ({
    row,
    cells: columns.map((column) => column.shown(row)),
    sameFolder: index > 0 && rows[index - 1]?.key === row.key,
  }));
}

/** The most rows a page of the list asks for. */
export const PAGE_ROWS = 200;

/** What the list asks the server for: the filter, the order, the config columns shown, where the page starts. */
export interface RunsQuery {
  filter: string;
  order: RunsOrder;
  config: readonly string[];
  offset: number;
}

/** The URL of `/api/runs` for `query` (relative to the page). */
export function runsUrl(query: RunsQuery): string {
  const params = new URLSearchParams({
    offset: String(Math.max(0, Math.floor(query.offset))),
    limit: String(PAGE_ROWS),
    sort: query.order.column,
    order: query.order.ascending ? "asc" : "desc",
  });
  if (query.filter.trim()) params.set("filter", query.filter);
  for (const name of query.config) params.append("config", name);
  return `api/runs?${params.toString()}`;
}

/** The rows of the runs at `key` (a stream's directory), whatever page of the list shows them:
 * what a run's page takes the server's verdict from. */
export function keyRunsUrl(key: string): string {
  return `api/runs?${new URLSearchParams({ key, limit: String(PAGE_ROWS) }).toString()}`;
}

/** The pager: which runs the page shows of how many, and whether there is a page before and after. */
export interface PagerView {
  text: string;
  previousDisabled: boolean;
  nextDisabled: boolean;
}

export function pagerView(page: RunsPage | undefined): PagerView {
  if (page === undefined) return { text: "", previousDisabled: true, nextDisabled: true };
  const { offset, total, rows } = page;
  const range = rows.length ? `${offset + 1}–${offset + rows.length} of ${total}` : `none of ${total}`;
  return {
    text: `runs ${range}${page.scanning ? " · still reading the runs" : ""}`,
    previousDisabled: offset <= 0,
    nextDisabled: offset + rows.length >= total,
  };
}

/** Where the page before (-1) or after (+1) `page` starts. */
export function pageOffset(page: RunsPage | undefined, direction: -1 | 1): number {
  if (page === undefined) return 0;
  const last = Math.max(0, Math.floor((page.total - 1) / PAGE_ROWS) * PAGE_ROWS);
  return Math.max(0, Math.min(page.offset + direction * PAGE_ROWS, last));
}

/** The order after a click on `column`'s head: the sorted column turns round; another starts A to Z for text, largest first otherwise. */
export function orderAfterClick(order: RunsOrder, column: RunsColumn, rows: readonly RunRow[]): RunsOrder {
  if (column.id === order.column) return { column: column.id, ascending: !order.ascending };
  const first = rows[0];
  return { column: column.id, ascending: first !== undefined && typeof column.sorted(first) === "string" };
}
