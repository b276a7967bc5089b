// What the runs list shows around its table: the server note in the header and the empty-list
// line. Pure (no DOM, no fetch): main.ts puts the result on the page; test/list-view.test.ts
// checks it in node.
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
  if (ok && !answer.list) return "the server's runs list is not a list; retrying";
  return `trainwire ${config.version}${config.read_only ? " · read-only" : ""}`;
}

/** The header note when the server's config could not be had (HTTP `status`). */
export function configRefusedNote(status: number): string {
  return status === 403 ? NO_TOKEN_NOTE : `the server answered ${status}`;
}
