// What the run view shows, decided from the run's state: the badge, the progress bar and line,
// the stop button, the phases and the notes. Pure (no DOM, no fetch): main.ts puts the result
// on the page, and test/run-view.test.ts checks each decision in node.
import { formatDuration, formatRate } from "../src/humanize.js";
import type { RunState } from "../src/index.js";
import { printable } from "../src/printable.js";
import type { RunVerdict } from "../src/types.js";
import { checkpointText, isOver, statusText } from "../src/verdict.js";
import { text } from "./dom.js";
import { runProgressParts } from "./run-progress.js";

/** What the run view knows beside the state: the step rate, when the run started, the server's mode. */
export interface RunViewInput {
  state: Readonly<RunState>;
  /** Steps a second, from the worker (`null`: not known yet). */
  rate: number | null;
  /** When the latest run started (ms since the epoch), from its `run.started`. */
  startedAt: number | null;
  /** Now (ms since the epoch): a running run's duration runs until then. */
  now: number;
  /** The server refuses stops: the page offers none. */
  readOnly: boolean;
  /** The run's verdict as the server judged it (its list row's): the page has no kept steps, no
   * journal and cannot prove a process dead, so a run the server calls over is shown so. */
  verdict?: RunVerdict | null;
}

export interface RunHeaderView {
  badge: { text: string; className: string };
  /** The bar's CSS width (`42.5%`). */
  barWidth: string;
  progressText: string;
  /** The step the line shows, as the page's `data-step` (empty: none yet). */
  step: string;
  stopHidden: boolean;
}

/** The badge, progress and stop button of a run in `input.state`. */
export function runHeaderView(input: RunViewInput): RunHeaderView {
  const { state } = input;
  const verdict = serverVerdict(input);
  if (verdict !== null) {
    return {
      badge: { text: printable(statusText(verdict)).replace("_", " "), className: `badge ${verdict.status}` },
      barWidth: `${Math.round(Math.min(progressFraction(state), 1) * 1000) / 10}%`,
      progressText: printable(progressParts(input).join(" · ")),
      step: String(verdict.step ?? state.step ?? ""),
      stopHidden: true, // the run is over
    };
  }
  return {
    badge: { text: state.status.replace("_", " "), className: `badge ${state.status}` },
    barWidth: `${Math.round(Math.min(progressFraction(state), 1) * 1000) / 10}%`,
    progressText: printable(progressParts(input).join(" · ")),
    step: String(state.step ?? ""),
    stopHidden: input.readOnly || state.status !== "running" || state.stop_requested,
  };
}

/** The server's verdict when it says the run the page shows is over while the page's own fold
 * cannot know it (no clock has passed, its process is proven gone, or the stream lost the
 * ending the writer's journal kept): else null. */
function serverVerdict({ state, verdict }: RunViewInput): RunVerdict | null {
  if (!verdict || verdict.run_id !== state.run_id || state.finished !== null) return null;
  return isOver(verdict) ? verdict : null;
}

/** The badge and progress of a run not shown yet: nothing of the previous run is left. */
export const EMPTY_RUN_HEADER: RunHeaderView = {
  badge: { text: "", className: "badge" },
  barWidth: "0%",
  progressText: "",
  step: "",
  stopHidden: true,
};

function progressFraction(state: Readonly<RunState>): number {
  return state.progress ?? (state.step !== null && state.total_steps ? state.step / state.total_steps : 0);
}

function progressParts(input: RunViewInput): string[] {
  const { state, rate, startedAt, now } = input;
  const verdict = serverVerdict({ state, rate: null, startedAt, now, readOnly: true, verdict: input.verdict ?? null });
  const step = verdict?.step ?? state.step;
  const parts = [`step ${text(step)}${state.total_steps ? ` / ${state.total_steps}` : ""}`];
  if (rate !== null) parts.push(formatRate(rate));
  if (state.status === "running" && state.eta_s !== null) parts.push(`ETA ${duration(state.eta_s)}`);
  if (state.loss !== null) parts.push(`loss ${text(state.loss)}`);
  if (state.attempt > 1) parts.push(`attempt ${state.attempt}`);
  parts.push(...runProgressParts(state));
  parts.push(`duration ${duration(verdict !== null ? verdict.duration_s : runDuration(state, startedAt, now))}`);
  if (state.finished)
    parts.push(`${state.finished.status}${state.finished.reason ? ` (${state.finished.reason})` : ""}`);
  const checkpoint = verdict !== null ? checkpointText(verdict.checkpoint) : resumeCheckpointText(state);
  if (checkpoint !== null) parts.push(checkpoint);
  if ((verdict?.status ?? state.status) === "stale" && state.last_ts !== null)
    parts.push(`silent since ${new Date(state.last_ts).toLocaleString()}: shown as ended at its last line`);
  return parts;
}

/**
 * The checkpoint to resume a finished run from, worded as the verdict words it: the one its
 * `run.finished` names, else the last one saved, labelled so (a stop that saved none); null
 * when there is none.
 */
export function resumeCheckpointText(state: Readonly<RunState>): string | null {
  if (state.finished === null) return null;
  const named = (state.finished as { checkpoint?: string | null }).checkpoint;
  if (named) return checkpointText({ path: named, source: "run.finished" });
  const last = state.last_checkpoint;
  return last === null ? null : checkpointText({ path: last.path, source: "checkpoint.saved" });
}

/** A finished run's own duration; a running one's until now; a stale one's until its last line. */
export function runDuration(state: Readonly<RunState>, startedAt: number | null, now: number): number | null {
  const finished = state.finished as { duration_s?: number | null } | null;
  if (finished !== null) return finished.duration_s ?? null;
  if (startedAt === null) return null;
  const end = state.status === "stale" && state.last_ts !== null ? Date.parse(state.last_ts) : now;
  return Math.max(0, (end - startedAt) / 1000);
}

/** A duration as the page words it; `–` for none. */
export function duration(seconds: number | null | undefined): string {
  return seconds === null || seconds === undefined || !Number.isFinite(seconds) ? "–" : formatDuration(seconds);
}

export interface PhaseEntry {
  name: string;
  /** How it ended; `null` while it is open. */
  status: string | null;
  duration: number | null;
}

/** A phase's line: an open phase reads "running" only while the run is, "unfinished" otherwise. */
export function phaseText(phase: PhaseEntry, runStatus: string | null): string {
  const status = phase.status ?? (runStatus === "running" ? "running" : "unfinished");
  return `${phase.name}: ${status}${phase.duration !== null ? `, ${duration(phase.duration)}` : ""}`;
}

/** The run's title once its `run.started` is read: its name (when it has one), its id and the key it is served under. */
export function runTitle(runId: string, key: string, name?: string | null): string {
  return printable(`${name ? `${name}  ` : ""}${runId}  (${key})`);
}

/** The line under the bar naming a resumed run's processes (empty for a run of one process). */
export function chainText(chain: readonly string[]): string {
  return chain.length > 1 ? `one curve across ${chain.length} processes: ${chain.join(" → ")}` : "";
}

export const OPENING_TEXT = "opening…";

export function missingRunText(key: string): string {
  return `no run ${key} on the server (yet): it is shown once its stream appears`;
}

export function unfollowableText(message: string): string {
  return `cannot follow this run: ${message}`;
}

/**
 * The question the stop button asks: a search (a run with trials) ends after its running
 * trials. The button writes the control file: a run whose `run.started.stop_channels` leaves
 * it out will not see it, and one that does not say may not.
 */
export function stopPrompt(search: boolean, stopChannels: readonly string[] | null = null): string {
  const question = search
    ? "Stop this search? It ends after its running trials, interrupted."
    : "Stop this run? It saves a checkpoint and ends interrupted.";
  return `${question}${stopChannelsWarning(stopChannels)}\nReason:`;
}

function stopChannelsWarning(stopChannels: readonly string[] | null): string {
  if (stopChannels === null)
    return "\nThis run does not say that it listens to the control file: the stop may stay pending.";
  if (stopChannels.includes("control_file")) return "";
  const heard = stopChannels.length > 0 ? stopChannels.join(", ") : "nothing";
  return `\nThis run does not listen to the control file (it listens to: ${heard}): the stop will stay pending.`;
}

export const STOP_DEFAULT_REASON = "stopped from the dashboard";

/** The line the page shows once the server answered a stop (`refusal`: its answer's body). */
export function stopOutcomeText(search: boolean, accepted: boolean, refusal: string): string {
  if (!accepted) return `stop refused: ${refusal}`;
  return `stop requested: ${search ? "the search ends after its running trials" : "the run saves a checkpoint and ends"}`;
}

/** A failed run's line under the bar, from its `run.finished`. */
export function runErrorText(status: string, error: { type: string; message: string }): string {
  return `${status}: ${error.type}: ${error.message}`;
}
