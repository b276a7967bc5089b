// The `trainwire serve` page: runs list, one run live, compare. Built by scripts/build-dashboard.mjs.
// Everything it shows comes from the package's own reader, fold and series store.
import { fromFetch } from "../src/browser.js";
import { type ChartCurve, chartList, chartOf } from "../src/charts.js";
import { formatDuration, formatRate } from "../src/humanize.js";
import { type DecodedLine, type RunSeries, type RunState, StreamReader, watchRun } from "../src/index.js";
import { assertNever } from "../src/vocabulary.js";
import { Chart } from "./chart.js";
import { runProgressParts } from "./run-progress.js";

interface ServerConfig {
  version: string;
  read_only: boolean;
}

interface RunRow {
  key: string;
  run_id: string;
  status: string;
  step: number | null;
  total_steps: number | null;
  duration_s: number | null;
  last_loss: number | null;
  best_loss: number | null;
  git_sha: string | null;
  started_at: string | null;
}

type SortKey = "run_id" | "status" | "progress" | "last_loss" | "best_loss" | "started_at" | "duration_s" | "git_sha";

const TOKEN_KEY = "trainwire-token";
const NO_TOKEN = "the server refused this page: open the URL `trainwire serve` printed (with ?token=)";
const LIST_POLL_MS = 2000;
const STREAM_POLL_MS = 1000;

const token = takeToken();
const $ = <T extends HTMLElement>(id: string): T => {
  const element = document.getElementById(id);
  if (element === null) throw new Error(`the page has no #${id}`);
  return element as T;
};

let config: ServerConfig = { version: "", read_only: true };
let rows: RunRow[] = [];
let sortKey: SortKey = "started_at";
let ascending = false;
const selected = new Set<string>();
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

function streamUrl(key: string): string {
  return `runs/${key.split("/").map(encodeURIComponent).join("/")}/progress.jsonl`;
}

function text(value: unknown): string {
  if (value === null || value === undefined) return "–";
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : value.toPrecision(4);
  return String(value);
}

function duration(seconds: number | null | undefined): string {
  return seconds === null || seconds === undefined || !Number.isFinite(seconds) ? "–" : formatDuration(seconds);
}

function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  content?: string,
  className?: string,
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (content !== undefined) node.textContent = content;
  if (className !== undefined) node.className = className;
  return node;
}

function badge(status: string): HTMLSpanElement {
  return element("span", status.replace("_", " "), `badge ${status}`);
}

// -- runs list --------------------------------------------------------------------------------

async function refreshRuns(): Promise<void> {
  try {
    const response = await fetchWithToken("api/runs", { cache: "no-store" });
    if (response.ok) rows = (await response.json()) as RunRow[];
    $("server-note").textContent =
      response.status === 403 ? NO_TOKEN : `trainwire ${config.version}${config.read_only ? " · read-only" : ""}`;
  } catch {
    $("server-note").textContent = "server unreachable; retrying";
  }
  renderRuns();
}

function progressOf(row: RunRow): number | null {
  return row.step !== null && row.total_steps ? Math.min(row.step / row.total_steps, 1) : null;
}

function sortValue(row: RunRow, key: SortKey): string | number | null {
  return key === "progress" ? progressOf(row) : row[key];
}

function renderRuns(): void {
  const filter = ($("filter") as HTMLInputElement).value.trim().toLowerCase();
  const shown = rows
    .filter(
      (row) =>
        !filter ||
        [row.run_id, row.status, row.git_sha ?? "", row.key].some((field) => field.toLowerCase().includes(filter)),
    )
    .sort((a, b) => {
      const x = sortValue(a, sortKey);
      const y = sortValue(b, sortKey);
      if (x === y) return 0;
      if (x === null) return 1;
      if (y === null) return -1;
      return (x < y ? -1 : 1) * (ascending ? 1 : -1);
    });
  const body = document.createElement("tbody");
  for (const row of shown) {
    const tr = element("tr");
    tr.dataset["key"] = row.key;
    const pick = element("input");
    pick.type = "checkbox";
    pick.checked = selected.has(row.key);
    pick.addEventListener("click", (event) => event.stopPropagation());
    pick.addEventListener("change", () => {
      if (pick.checked) selected.add(row.key);
      else selected.delete(row.key);
      ($("compare-selected") as HTMLButtonElement).disabled = selected.size < 1;
    });
    const check = element("td");
    check.append(pick);
    const status = element("td");
    status.append(badge(row.status));
    const progress = element("td");
    const fraction = progressOf(row);
    const bar = element("span", undefined, "mini");
    const fill = element("span");
    fill.style.width = `${Math.round((fraction ?? 0) * 100)}%`;
    bar.append(fill);
    progress.append(bar, ` ${text(row.step)}${row.total_steps ? `/${row.total_steps}` : ""}`);
    tr.append(
      check,
      element("td", row.run_id),
      status,
      progress,
      element("td", text(row.last_loss)),
      element("td", text(row.best_loss)),
      element("td", row.started_at ? new Date(row.started_at).toLocaleString() : "–"),
      element("td", duration(row.duration_s)),
      element("td", (row.git_sha ?? "–").slice(0, 10)),
    );
    tr.addEventListener("click", () => {
      location.hash = `#/run/${encodeURIComponent(row.key)}`;
    });
    body.append(tr);
  }
  $("runs").querySelector("tbody")?.replaceWith(body);
  $("runs-empty").hidden = rows.length > 0;
  for (const th of $("runs").querySelectorAll<HTMLElement>("th[data-sort]")) {
    th.classList.toggle("sorted", th.dataset["sort"] === sortKey);
    th.classList.toggle("ascending", th.dataset["sort"] === sortKey && ascending);
  }
}

// -- one run ----------------------------------------------------------------------------------

interface RunView {
  key: string;
  charts: Map<string, Chart>;
  phases: { name: string; status: string | null; duration: number | null }[];
  trials: Map<string, { trial: number; status: string; metrics: Record<string, unknown> }>;
  bestTrial: number | null;
  attemptStart: { step: number; elapsed: number } | null;
  rate: number | null;
  series: RunSeries | undefined;
}

function newRunView(key: string): RunView {
  $("charts").replaceChildren();
  $("phases").replaceChildren();
  $("provenance").replaceChildren();
  $("config").textContent = "";
  $("trials").querySelector("tbody")?.replaceChildren();
  return {
    key,
    charts: new Map(),
    phases: [],
    trials: new Map(),
    bestTrial: null,
    attemptStart: null,
    rate: null,
    series: undefined,
  };
}

async function openRun(key: string, signal: AbortSignal): Promise<void> {
  shownRun = newRunView(key);
  let runView = shownRun;
  $("run-title").textContent = key;
  let pending = false;
  const updates = watchRun(
    (hooks) =>
      fromFetch(streamUrl(key), {
        ...hooks,
        headers: authorised,
        pollIntervalMs: STREAM_POLL_MS,
        pauseWhenHidden: true,
      }),
    { series: true, signal },
  );
  for await (const update of updates) {
    if (update.reset) runView = shownRun = newRunView(key);
    for (const item of update.events) onEvent(runView, item);
    runView.series = update.series;
    renderRunState(runView, update.state);
    if (!pending) {
      pending = true;
      requestAnimationFrame(() => {
        pending = false;
        renderCharts(runView);
      });
    }
  }
}

function onEvent(runView: RunView, item: DecodedLine): void {
  if (item.kind !== "event") return;
  const event = item.event;
  switch (event.event) {
    case "run.started": {
      $("run-title").textContent = `${event.run_id}  (${runView.key})`;
      $("config").textContent = JSON.stringify(event.config ?? {}, null, 2);
      const list = $("provenance");
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
        list.append(element("dt", name), element("dd", value === undefined ? "–" : String(value)));
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
    case "train.step":
      if (runView.attemptStart === null) runView.attemptStart = { step: event.step, elapsed: event.elapsed_s };
      else if (event.elapsed_s > runView.attemptStart.elapsed)
        runView.rate = (event.step - runView.attemptStart.step) / (event.elapsed_s - runView.attemptStart.elapsed);
      break;
    case "train.restarted":
      runView.attemptStart = null;
      break;
    case "trial.started":
      runView.trials.set(`${event.trial}/${event.attempt}`, { trial: event.trial, status: "running", metrics: {} });
      break;
    case "trial.ended":
      runView.trials.set(`${event.trial}/${event.attempt}`, {
        trial: event.trial,
        status: event.status,
        metrics: event.metrics,
      });
      if (event.best) runView.bestTrial = event.best.trial;
      break;
    case "run.heartbeat":
    case "phase.progress":
    case "train.rolled_back":
    case "train.epoch":
    case "eval.completed":
    case "checkpoint.saved":
    case "stop.requested":
    case "run.finished":
      break; // no panel of their own: the run state and the charts show them
    default:
      assertNever(event);
  }
  renderPanels(runView);
}

function renderRunState(runView: RunView, state: Readonly<RunState> | undefined): void {
  if (state === undefined) return;
  const status = $("run-status");
  status.className = `badge ${state.status}`;
  status.textContent = state.status.replace("_", " ");
  const fraction = state.progress ?? (state.step !== null && state.total_steps ? state.step / state.total_steps : 0);
  $("progress-bar").style.width = `${Math.round(Math.min(fraction, 1) * 1000) / 10}%`;
  const parts = [`step ${text(state.step)}${state.total_steps ? ` / ${state.total_steps}` : ""}`];
  if (runView.rate !== null) parts.push(formatRate(runView.rate));
  if (state.status === "running" && state.eta_s !== null) parts.push(`ETA ${duration(state.eta_s)}`);
  if (state.loss !== null) parts.push(`loss ${text(state.loss)}`);
  if (state.attempt > 1) parts.push(`attempt ${state.attempt}`);
  parts.push(...runProgressParts(state));
  if (state.finished)
    parts.push(`${state.finished.status}${state.finished.reason ? ` (${state.finished.reason})` : ""}`);
  $("progress-text").textContent = parts.join(" · ");
  $("progress-text").dataset["step"] = String(state.step ?? "");
  const stop = $("stop") as HTMLButtonElement;
  stop.hidden = config.read_only || state.status !== "running" || state.stop_requested;
}

function renderCharts(runView: RunView): void {
  if (runView.series === undefined) return;
  const smoothing = Number(($("smoothing") as HTMLInputElement).value);
  const log = ($("log-scale") as HTMLInputElement).checked;
  const drawn = chartList([[runView.series.runId, runView.series]]);
  for (const data of drawn) {
    let chart = runView.charts.get(data.title);
    if (chart === undefined) {
      chart = new Chart(data.title, $("charts"));
      runView.charts.set(data.title, chart);
    }
    chart.update(data, smoothing, log);
    chart.root.dataset["points"] = String(chart.points);
  }
  // a chart that appears later still takes its place in the specification's order
  const roots = drawn.map((data) => runView.charts.get(data.title)?.root as HTMLElement);
  if (roots.some((root, index) => $("charts").children[index] !== root)) $("charts").append(...roots);
}

function renderPanels(runView: RunView): void {
  const phases = $("phases");
  phases.replaceChildren(
    ...runView.phases.map((phase) =>
      element(
        "li",
        `${phase.name}: ${phase.status ?? "running"}${phase.duration !== null ? `, ${duration(phase.duration)}` : ""}`,
      ),
    ),
  );
  const body = $("trials").querySelector("tbody");
  body?.replaceChildren(
    ...[...runView.trials.values()].map((trial) => {
      const tr = element("tr", undefined, trial.trial === runView.bestTrial ? "best" : undefined);
      tr.append(
        element("td", String(trial.trial)),
        element("td", trial.status),
        element(
          "td",
          Object.entries(trial.metrics)
            .map(([name, value]) => `${name} ${text(value)}`)
            .join(", "),
        ),
      );
      return tr;
    }),
  );
}

async function requestStop(key: string): Promise<void> {
  const reason = prompt(
    "Stop this run? It saves a checkpoint and ends interrupted.\nReason:",
    "stopped from the dashboard",
  );
  if (reason === null) return;
  const response = await fetchWithToken(`api/runs/${key.split("/").map(encodeURIComponent).join("/")}/stop`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ reason, requested_by: "dashboard" }),
  });
  $("progress-text").textContent = response.ok
    ? "stop requested: the run saves a checkpoint and ends"
    : `stop refused: ${await response.text()}`;
  ($("stop") as HTMLButtonElement).hidden = response.ok;
}

// -- compare ----------------------------------------------------------------------------------

async function openCompare(keys: string[], signal: AbortSignal): Promise<void> {
  const container = $("compare-chart");
  container.replaceChildren();
  $("compare-note").textContent = keys.length
    ? `Loss of ${keys.length} run(s), overlaid on the step axis.`
    : "Pick runs in the list, then Compare selected.";
  const chart = new Chart("loss", container);
  const series: ChartCurve[] = [];
  for (const key of keys) {
    const response = await fetchWithToken(streamUrl(key), { signal });
    const reader = new StreamReader({ series: true });
    reader.feed(new Uint8Array(await response.arrayBuffer()));
    const run = reader.latestRun();
    const history = run === undefined ? undefined : reader.series?.run(run.run_id);
    if (history === undefined) continue;
    const [steps, values] = history.uplot("loss");
    series.push({ name: "loss", label: `loss ${key}`, run: history.runId, sparse: false, steps, values });
  }
  chart.update({ ...chartOf("loss"), series, markers: [] }, Number(($("smoothing") as HTMLInputElement).value), false);
  chart.root.dataset["points"] = String(chart.points);
}

// -- routing ----------------------------------------------------------------------------------

function route(): void {
  view?.abort();
  view = new AbortController();
  const hash = location.hash || "#/";
  $("runs-view").hidden = !(hash === "#/" || hash === "#");
  $("run-view").hidden = !hash.startsWith("#/run/");
  $("compare-view").hidden = !hash.startsWith("#/compare");
  if (hash.startsWith("#/run/")) {
    const key = decodeURIComponent(hash.slice("#/run/".length));
    ($("stop") as HTMLButtonElement).onclick = () => void requestStop(key);
    openRun(key, view.signal).catch((error: unknown) => {
      $("progress-text").textContent = `cannot follow this run: ${String(error)}`;
    });
  } else if (hash.startsWith("#/compare")) {
    const keys = new URLSearchParams(hash.split("?")[1] ?? "").getAll("run");
    openCompare(keys, view.signal).catch((error: unknown) => {
      $("compare-note").textContent = `cannot compare: ${String(error)}`;
    });
  }
}

async function start(): Promise<void> {
  const answer = await fetchWithToken("api/config", { cache: "no-store" });
  if (answer.ok) config = (await answer.json()) as ServerConfig;
  else $("server-note").textContent = answer.status === 403 ? NO_TOKEN : `the server answered ${answer.status}`;
  $("filter").addEventListener("input", renderRuns);
  for (const th of $("runs").querySelectorAll<HTMLElement>("th[data-sort]")) {
    th.addEventListener("click", () => {
      const key = th.dataset["sort"] as SortKey;
      ascending = key === sortKey ? !ascending : key === "run_id" || key === "status";
      sortKey = key;
      renderRuns();
    });
  }
  $("compare-selected").addEventListener("click", () => {
    location.hash = `#/compare?${[...selected].map((key) => `run=${encodeURIComponent(key)}`).join("&")}`;
  });
  for (const id of ["smoothing", "log-scale"])
    $(id).addEventListener("input", () => {
      if (shownRun !== undefined) renderCharts(shownRun);
    });
  window.addEventListener("hashchange", route);
  route();
  await refreshRuns();
  setInterval(() => void refreshRuns(), LIST_POLL_MS);
}

void start();
