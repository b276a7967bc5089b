// One run's page: its header, charts and panels, followed live through the decoding worker.
// What it shows is decided in run-view.ts; this module puts it on the page.
import type { ChartData } from "../src/charts.js";
import type { Line, RunState, RunVerdict } from "../src/index.js";
import { printable } from "../src/printable.js";
import { assertNever } from "../src/vocabulary.js";
import { element } from "./dom.js";
import { type FeedMessage, follow } from "./feed.js";
import { isViewLine, type ViewLine } from "./feed-messages.js";
import { byId, ID, required } from "./page-ids.js";
import { RunCharts } from "./run-charts.js";
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
  unfollowableText,
} from "./run-view.js";
import { TRIAL_CURVES_KIND } from "./trial-curves.js";
import { TrialsPanel } from "./trials-panel.js";

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
  /** What its `run.started` says it listens to (`stop_channels`), or null when it does not say. */
  stopChannels: readonly string[] | null;
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
    stopChannels: null,
  };
}

/** What the page needs of the run it shows, once it is open. */
export interface ShownRun {
  /** Draws the charts again (the smoothing or the log scale changed). */
  redrawCharts(): void;
  /** Whether it is a search (it has trials): a stop ends it after its running trials. */
  isSearch(): boolean;
  /** What it listens to, from its `run.started` (`stop_channels`), or null when it does not say. */
  stopChannels(): readonly string[] | null;
}

export interface RunPageContext {
  token: string;
  pollMs: number;
  /** Whether the server refuses stops (it is known only once the server's config is in). */
  readOnly(): boolean;
  /** The verdict of the run `runId` as the server last gave it, or null. */
  serverVerdict?(runId: string): RunVerdict | null;
}

/** Follows the run at `key` through a decoding worker until `signal` aborts. */
export function openRun(key: string, signal: AbortSignal, context: RunPageContext): ShownRun {
  let runView = newRunView(key);
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
  follow(key, context.token, context.pollMs, signal, (message: FeedMessage) => {
    switch (message.kind) {
      case "missing":
        runView = newRunView(key);
        byId(ID.progressText).textContent = missingRunText(key);
        return;
      case "failed":
        byId(ID.progressText).textContent = unfollowableText(message.message);
        return;
      case "state":
        renderRunState(runView, message.state, context);
        return;
      case "update":
        if (message.reset) {
          runView = newRunView(key, runView.charts);
          runView.charts.keepOnly(new Set(message.charts.map((chart) => chart.title)));
        }
        for (const event of message.events) onEvent(runView, event);
        runView.rate = message.rate;
        // the trials' losses are the trials panel's chart, drawn with the state's trials
        runView.drawn = message.charts.filter((chart) => chart.kind !== TRIAL_CURVES_KIND);
        runView.trials.curves(message.charts.find((chart) => chart.kind === TRIAL_CURVES_KIND));
        byId(ID.runChain).textContent = chainText(message.chain);
        byId(ID.runView).dataset["bytes"] = String(message.bytes);
        renderRunState(runView, message.state, context);
        if (!pending) {
          pending = true;
          requestAnimationFrame(draw);
        }
        return;
      default:
        assertNever(message);
    }
  });
  return {
    redrawCharts: () => renderCharts(runView),
    isSearch: () => runView.search,
    stopChannels: () => runView.stopChannels,
  };
}

function onEvent(runView: RunView, event: Line): void {
  // the feed sends the view events only; a panel shows nothing of any other
  if (isViewLine(event)) showOnPanels(runView, event);
  renderPanels(runView);
}

function showOnPanels(runView: RunView, event: ViewLine): void {
  switch (event.event) {
    case "run.started": {
      byId(ID.runTitle).textContent = runTitle(event.run_id, runView.key, event.name);
      runView.startedAt = Date.parse(event.ts);
      runView.stopChannels = event.stop_channels ?? null;
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
    case "stop.requested":
      break; // no panel of their own: the run state and the charts show them
    default:
      assertNever(event);
  }
}

function renderRunState(runView: RunView, state: Readonly<RunState> | undefined, context: RunPageContext): void {
  if (state === undefined) return;
  runView.trials.render(state.trials);
  runView.search = state.trials.count > 0;
  showRunHeader(
    runHeaderView({
      state,
      rate: runView.rate,
      startedAt: runView.startedAt,
      now: Date.now(),
      readOnly: context.readOnly(),
      verdict: state.run_id === null ? null : (context.serverVerdict?.(state.run_id) ?? null),
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
