// The `trainwire serve` page: runs list, one run live, compare. Built by scripts/build-dashboard.mjs.
// Everything it shows comes from the package's own reader, fold and series store.
import type { ChartData } from "../src/charts.js";
import type { Line, RunState } from "../src/index.js";
import { printable } from "../src/printable.js";
import { assertNever } from "../src/vocabulary.js";
import { openCompare } from "./compare.js";
import { element, encodedKey } from "./dom.js";
import { type FeedMessage, follow } from "./feed.js";
import { configRefusedNote, listView, type RunsAnswer } from "./list-view.js";
import { byId, ID, required } from "./page-ids.js";
import { RunCharts } from "./run-charts.js";
import { checkedRows } from "./run-rows.js";
import {
  chainText,
  EMPTY_RUN_HEADER,
  missingRunText,
  OPENING_TEXT,
  type PhaseEntry,
  phaseText,
  type RunHeaderView,
  runErrorText,
  runHeaderView,
  runTitle,
  STOP_DEFAULT_REASON,
  stopOutcomeText,
  stopPrompt,
  unfollowableText,
} from "./run-view.js";
import { RunsTable } from "./runs-table.js";
import { checkedConfig, type ServerConfig, UNKNOWN_CONFIG } from "./server-config.js";
import { TRIAL_CURVES_KIND } from "./trial-curves.js";
import { TrialsPanel } from "./trials-panel.js";

const TOKEN_KEY = "trainwire-token";
const LIST_POLL_MS = 2000;
const STREAM_POLL_MS = 1000;

const token = takeToken();

let config: ServerConfig = UNKNOWN_CONFIG;
let table: RunsTable | undefined;
let view: AbortController | undefined;
let shownRun: RunView | undefined;

/** The token comes in the URL the server printed; kept for this tab only, and out of the address bar. */
function takeToken(): string {
  const url = new URL(location.href);
  const given = url.searchParams.get("token");
  if (given !== null) {
    sessionStorage.setItem(TOKEN_KEY, given);
    url.searchParams.delete("token");
    history.replaceState(null, "", url.pathname + url.search + url.hash);
  }
  return sessionStorage.getItem(TOKEN_KEY) ?? "";
}

/** Every request to the server carries the token: the runs, the streams and stop all need it. */
const authorised: Record<string, string> = { "X-Trainwire-Token": token };

function fetchWithToken(url: string, init: RequestInit = {}): Promise<Response> {
  return fetch(url, { ...init, headers: { ...authorised, ...(init.headers as Record<string, string> | undefined) } });
}

// -- runs list --------------------------------------------------------------------------------

async function refreshRuns(): Promise<void> {
  let answer: RunsAnswer;
  try {
    const response = await fetchWithToken("api/runs", { cache: "no-store" });
    // every row is checked before it is shown: a field of the wrong type is blanked, not thrown on
    const rows = response.ok ? checkedRows(await response.json().catch(() => undefined)) : undefined;
    if (rows !== undefined) table?.update(rows);
    answer = { reached: true, status: response.status, list: rows !== undefined };
  } catch {
    answer = { reached: false };
  }
  const shown = listView(answer, config, table?.rows.length ?? 0);
  byId(ID.serverNote).textContent = shown.serverNote;
  byId(ID.runsEmpty).hidden = shown.emptyHidden;
}

// -- one run ----------------------------------------------------------------------------------

interface RunView {
  key: string;
  charts: RunCharts;
  phases: PhaseEntry[];
  trials: TrialsPanel;
  rate: number | null;
  /** The charts the worker made of the run's (joined) history. */
  drawn: ChartData[];
  /** When the latest run started (ms since the epoch), from its `run.started`. */
  startedAt: number | null;
  /** Its status as last decided: an open phase of a run that is not running reads "unfinished". */
  status: string | null;
  /** Whether it is a search (it has trials): a stop ends it after its running trials. */
  search: boolean;
}

/**
 * A fresh run view: nothing of the previous run (badge, progress, panels, charts) is left. With
 * `charts`, those charts are kept to be drawn again (a newer run of the same stream): making
 * every chart anew on each run of a stream of many runs would stall the page while it loads.
 */
function newRunView(key: string, kept?: RunCharts): RunView {
  let charts = kept;
  if (charts === undefined) {
    byId(ID.charts).replaceChildren();
    charts = new RunCharts(byId(ID.charts));
  }
  byId(ID.phases).replaceChildren();
  byId(ID.provenance).replaceChildren();
  byId(ID.config).textContent = "";
  byId(ID.runTitle).textContent = key;
  showRunHeader(EMPTY_RUN_HEADER);
  byId(ID.runError).hidden = true;
  byId(ID.runChain).textContent = "";
  return {
    key,
    charts,
    phases: [],
    trials: new TrialsPanel(byId(ID.trialsPanel)),
    rate: null,
    drawn: [],
    startedAt: null,
    status: null,
    search: false,
  };
}

/** Follows the run at `key` through a decoding worker until `signal` aborts. */
function openRun(key: string, signal: AbortSignal): void {
  shownRun = newRunView(key);
  let runView = shownRun;
  let pending = false;
  byId(ID.progressText).textContent = OPENING_TEXT;
  // Making a chart is the page's longest work: one new chart a frame, so that opening a run
  // with many charts never holds the page for long; charts already made are redrawn together.
  const draw = (): void => {
    pending = false;
    const next = runView.drawn.findIndex((chart) => !runView.charts.has(chart.title));
    if (next === -1) {
      renderCharts(runView);
      return;
    }
    renderCharts({ ...runView, drawn: runView.drawn.slice(0, next + 1) });
    pending = true;
    requestAnimationFrame(draw);
  };
  follow(key, token, STREAM_POLL_MS, signal, (message: FeedMessage) => {
    switch (message.kind) {
      case "missing":
        runView = shownRun = newRunView(key);
        byId(ID.progressText).textContent = missingRunText(key);
        return;
      case "failed":
        byId(ID.progressText).textContent = unfollowableText(message.message);
        return;
      case "state":
        renderRunState(runView, message.state);
        return;
      case "update":
        if (message.reset) {
          runView = shownRun = newRunView(key, runView.charts);
          runView.charts.keepOnly(new Set(message.charts.map((chart) => chart.title)));
        }
        for (const event of message.events) onEvent(runView, event);
        runView.rate = message.rate;
        // the trials' losses are the trials panel's chart, drawn with the state's trials
        runView.drawn = message.charts.filter((chart) => chart.kind !== TRIAL_CURVES_KIND);
        runView.trials.curves(message.charts.find((chart) => chart.kind === TRIAL_CURVES_KIND));
        byId(ID.runChain).textContent = chainText(message.chain);
        byId(ID.runView).dataset["bytes"] = String(message.bytes);
        renderRunState(runView, message.state);
        if (!pending) {
          pending = true;
          requestAnimationFrame(draw);
        }
        return;
      default:
        assertNever(message);
    }
  });
}

function onEvent(runView: RunView, event: Line): void {
  switch (event.event) {
    case "run.started": {
      byId(ID.runTitle).textContent = runTitle(event.run_id, runView.key);
      runView.startedAt = Date.parse(event.ts);
      byId(ID.config).textContent = JSON.stringify(event.config ?? {}, null, 2)
        .split("\n")
        .map(printable)
        .join("\n");
      const list = byId(ID.provenance);
      list.replaceChildren();
      const provenance = event.provenance ?? {};
      const entries: [string, unknown][] = [
        ["git sha", provenance.git_sha],
        ["git dirty", provenance.git_dirty],
        ["seed", provenance.seed],
        ["python", provenance.python],
        ["platform", provenance.platform],
        ...Object.entries(provenance.packages ?? {}),
      ];
      for (const [name, value] of entries)
        list.append(element("dt", name), element("dd", value === undefined || value === null ? "–" : String(value)));
      break;
    }
    case "phase.started":
      runView.phases.push({ name: event.phase, status: null, duration: null });
      break;
    case "phase.ended": {
      const open = [...runView.phases].reverse().find((phase) => phase.name === event.phase && phase.status === null);
      if (open !== undefined) Object.assign(open, { status: event.status, duration: event.duration_s });
      else runView.phases.push({ name: event.phase, status: event.status, duration: event.duration_s });
      break;
    }
    case "trial.ended":
      runView.trials.trialEnded(event.trial, event.best);
      break;
    case "run.finished":
      if (event.error !== null) {
        byId(ID.runError).hidden = false;
        byId(ID.runError).textContent = runErrorText(event.status, event.error);
      }
      break;
    case "trial.started":
    case "run.heartbeat":
    case "phase.progress":
    case "train.rolled_back":
    case "train.step":
    case "train.restarted":
    case "train.epoch":
    case "eval.completed":
    case "checkpoint.saved":
    case "stop.requested":
      break; // no panel of their own: the run state and the charts show them
    default:
      assertNever(event);
  }
  renderPanels(runView);
}

function renderRunState(runView: RunView, state: Readonly<RunState> | undefined): void {
  if (state === undefined) return;
  runView.trials.render(state.trials);
  runView.search = state.trials.count > 0;
  showRunHeader(
    runHeaderView({
      state,
      rate: runView.rate,
      startedAt: runView.startedAt,
      now: Date.now(),
      readOnly: config.read_only,
    }),
  );
  if (runView.status !== state.status) {
    runView.status = state.status;
    renderPanels(runView); // an open phase reads "running" only while the run is
  }
}

function showRunHeader(header: RunHeaderView): void {
  const badge = byId(ID.runStatus);
  badge.className = header.badge.className;
  badge.textContent = header.badge.text;
  byId(ID.progressBar).style.width = header.barWidth;
  const progress = byId(ID.progressText);
  progress.textContent = header.progressText;
  progress.dataset["step"] = header.step;
  required(ID.stop, HTMLButtonElement).hidden = header.stopHidden;
}

function renderCharts(runView: RunView): void {
  const smoothing = Number(required(ID.smoothing, HTMLInputElement).value);
  const log = required(ID.logScale, HTMLInputElement).checked;
  runView.charts.render(runView.drawn, smoothing, log);
}

function renderPanels(runView: RunView): void {
  const phases = byId(ID.phases);
  phases.replaceChildren(...runView.phases.map((phase) => element("li", phaseText(phase, runView.status))));
}

async function requestStop(key: string): Promise<void> {
  const search = shownRun?.search ?? false;
  const reason = prompt(stopPrompt(search), STOP_DEFAULT_REASON);
  if (reason === null) return;
  const response = await fetchWithToken(`api/runs/${encodedKey(key)}/stop`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ reason, requested_by: "dashboard" }),
  });
  byId(ID.progressText).textContent = stopOutcomeText(search, response.ok, response.ok ? "" : await response.text());
  required(ID.stop, HTMLButtonElement).hidden = response.ok;
}

// -- routing ----------------------------------------------------------------------------------

function route(): void {
  view?.abort();
  view = new AbortController();
  const hash = location.hash || "#/";
  byId(ID.runsView).hidden = !(hash === "#/" || hash === "#");
  byId(ID.runView).hidden = !hash.startsWith("#/run/");
  byId(ID.compareView).hidden = !hash.startsWith("#/compare");
  if (hash.startsWith("#/run/")) {
    const key = decodeURIComponent(hash.slice("#/run/".length));
    required(ID.stop, HTMLButtonElement).onclick = () => void requestStop(key);
    openRun(key, view.signal);
  } else if (hash.startsWith("#/compare")) {
    const keys = new URLSearchParams(hash.split("?")[1] ?? "").getAll("run");
    openCompare(keys, token, STREAM_POLL_MS, view.signal, () => Number(required(ID.smoothing, HTMLInputElement).value));
  }
}

async function start(): Promise<void> {
  const runsTable = new RunsTable(
    required(ID.runs, HTMLTableElement),
    byId(ID.configColumns),
    required(ID.filter, HTMLInputElement),
    (key) => {
      location.hash = `#/run/${encodeURIComponent(key)}`;
    },
    () => {
      required(ID.compareSelected, HTMLButtonElement).disabled = runsTable.selected.size < 1;
    },
  );
  table = runsTable;
  byId(ID.compareSelected).addEventListener("click", () => {
    location.hash = `#/compare?${[...runsTable.selected].map((key) => `run=${encodeURIComponent(key)}`).join("&")}`;
  });
  for (const id of [ID.smoothing, ID.logScale])
    byId(id).addEventListener("input", () => {
      if (shownRun !== undefined) renderCharts(shownRun);
    });
  window.addEventListener("hashchange", route);
  route(); // a run opens at once; the stop button waits for the config (read-only until then)
  const answer = await fetchWithToken("api/config", { cache: "no-store" });
  if (answer.ok) config = checkedConfig(await answer.json().catch(() => undefined));
  else byId(ID.serverNote).textContent = configRefusedNote(answer.status);
  await refreshRuns();
  setInterval(() => void refreshRuns(), LIST_POLL_MS);
}

void start();
