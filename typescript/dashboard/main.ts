// The `trainwire serve` page: runs list, one run live, compare. Built by scripts/build-dashboard.mjs.
// Everything it shows comes from the package's own reader, fold and series store. This module
// only wires the parts together: the views decide what to show (run-view.ts, list-view.ts).
import { openCompare } from "./compare.js";
import { configRefusedNote, keyRunsUrl, listView, type RunsAnswer } from "./list-view.js";
import { byId, ID, required } from "./page-ids.js";
import { compareHash, parseRoute, runHash } from "./route.js";
import { openRun, type ShownRun } from "./run-page.js";
import { checkedPage, type RunRow } from "./run-rows.js";
import { RunsTable } from "./runs-table.js";
import { checkedConfig, type ServerConfig, UNKNOWN_CONFIG } from "./server-config.js";
import { requestStop } from "./stop.js";
import { fetchWithToken, takeToken } from "./token.js";

const LIST_POLL_MS = 2000;
const STREAM_POLL_MS = 1000;
/** How long a run's page waits for the server's verdict of it before it opens without. */
const SHOWN_ROWS_WAIT_MS = 2000;

const token = takeToken();
const serverFetch = fetchWithToken(token);

let config: ServerConfig = UNKNOWN_CONFIG;
let table: RunsTable | undefined;
let view: AbortController | undefined;
let shownRun: ShownRun | undefined;
/** The server's rows of the run shown (its key's), whatever page of the list shows them. */
let shownRows: { key: string; rows: readonly RunRow[] } | undefined;

// -- runs list --------------------------------------------------------------------------------

/** Each ask of the runs list is numbered: an answer to an older one than the last shown is dropped. */
let runsAsked = 0;
let runsShown = 0;

async function refreshRuns(): Promise<void> {
  if (table === undefined) return;
  void refreshShownRows();
  const asked = ++runsAsked;
  let answer: RunsAnswer;
  try {
    const response = await serverFetch(table.url(), { cache: "no-store" });
    // every row is checked before it is shown: a field of the wrong type is blanked, not thrown on
    const page = response.ok ? checkedPage(await response.json().catch(() => undefined)) : undefined;
    if (asked < runsShown) return; // a later ask was answered first: its page stays
    runsShown = asked;
    if (page !== undefined) table.update(page);
    answer = { reached: true, status: response.status, list: page !== undefined };
  } catch {
    answer = { reached: false };
  }
  const shown = listView(answer, config, table?.rows.length ?? 0);
  byId(ID.serverNote).textContent = shown.serverNote;
  byId(ID.runsEmpty).hidden = shown.emptyHidden;
}

/** Asks for the shown run's rows (its verdict); an answer for a run no longer shown is dropped. */
async function refreshShownRows(): Promise<void> {
  const shown = parseRoute(location.hash);
  if (shown.view !== "run") return;
  try {
    const response = await serverFetch(keyRunsUrl(shown.key), {
      cache: "no-store",
      signal: AbortSignal.timeout(SHOWN_ROWS_WAIT_MS),
    });
    const page = response.ok ? checkedPage(await response.json().catch(() => undefined)) : undefined;
    const now = parseRoute(location.hash);
    if (page !== undefined && now.view === "run" && now.key === shown.key)
      shownRows = { key: shown.key, rows: page.rows.filter((row) => row.key === shown.key) };
  } catch {
    // the server out of reach: the page keeps the rows it had
  }
}

async function stopShownRun(key: string): Promise<void> {
  const outcome = await requestStop(key, shownRun?.isSearch() ?? false, serverFetch, shownRun?.stopChannels() ?? null);
  if (outcome === undefined) return;
  byId(ID.progressText).textContent = outcome.text;
  required(ID.stop, HTMLButtonElement).hidden = outcome.accepted;
}

// -- routing ----------------------------------------------------------------------------------

function route(): void {
  view?.abort();
  view = new AbortController();
  const shown = parseRoute(location.hash);
  byId(ID.runsView).hidden = shown.view !== "runs";
  byId(ID.runView).hidden = shown.view !== "run";
  byId(ID.compareView).hidden = shown.view !== "compare";
  shownRun = undefined;
  if (shown.view === "run") {
    required(ID.stop, HTMLButtonElement).onclick = () => void stopShownRun(shown.key);
    void openShownRun(shown.key, view.signal);
  } else if (shown.view === "compare") {
    openCompare(shown.keys, token, STREAM_POLL_MS, view.signal, () =>
      Number(required(ID.smoothing, HTMLInputElement).value),
    );
  }
}

/** Opens the run at `key` once the server's verdict of it is in (or did not come in time), so
 * the page never shows a story of its own first and the server's a moment later. */
async function openShownRun(key: string, signal: AbortSignal): Promise<void> {
  await refreshShownRows();
  if (signal.aborted) return;
  shownRun = openRun(key, signal, {
    token,
    pollMs: STREAM_POLL_MS,
    readOnly: () => config.read_only,
    serverVerdict: (runId) =>
      (shownRows?.key === key ? shownRows.rows : []).find((row) => row.verdict?.run_id === runId)?.verdict ?? null,
  });
}

async function start(): Promise<void> {
  const runsTable = new RunsTable(
    {
      table: required(ID.runs, HTMLTableElement),
      picker: byId(ID.configColumns),
      filter: required(ID.filter, HTMLInputElement),
      pager: {
        text: byId(ID.runsPage),
        previous: required(ID.runsPrevious, HTMLButtonElement),
        next: required(ID.runsNext, HTMLButtonElement),
      },
    },
    (key) => {
      location.hash = runHash(key);
    },
    () => {
      required(ID.compareSelected, HTMLButtonElement).disabled = runsTable.selected.size < 1;
    },
    () => void refreshRuns(),
  );
  table = runsTable;
  byId(ID.compareSelected).addEventListener("click", () => {
    location.hash = compareHash(runsTable.selected);
  });
  for (const id of [ID.smoothing, ID.logScale])
    byId(id).addEventListener("input", () => {
      shownRun?.redrawCharts();
    });
  window.addEventListener("hashchange", route);
  route(); // a run opens at once; the stop button waits for the config (read-only until then)
  const answer = await serverFetch("api/config", { cache: "no-store" });
  if (answer.ok) config = checkedConfig(await answer.json().catch(() => undefined));
  else byId(ID.serverNote).textContent = configRefusedNote(answer.status);
  await refreshRuns();
  setInterval(() => void refreshRuns(), LIST_POLL_MS);
}

void start();
