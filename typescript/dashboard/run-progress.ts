// The run view's contract 1.1 progress: the running trial, a phase's per-item progress and the
// cycle, worded as `trainwire tail` words them (`trial 4/20`, `eval 1,200/5,000 items, ETA 9.5s`,
// `cycle 2 of 5`).
import { formatDuration } from "../src/humanize.js";
import type { RunState } from "../src/index.js";

/** The parts of the progress line that trials, counted items and cycles add (none for a 1.0 run). */
export function runProgressParts(state: Readonly<RunState>): string[] {
  const parts: string[] = [];
  const running = state.trials.list?.filter((trial) => trial.status === "running").at(-1);
  if (running !== undefined) parts.push(`trial ${running.trial}${state.trials.total ? `/${state.trials.total}` : ""}`);
  const counted = state.phase_progress;
  if (counted) {
    let text = `${counted.phase} ${grouped(counted.done)}${counted.total !== null ? `/${grouped(counted.total)}` : ""}`;
    if (counted.unit) text += ` ${counted.unit}`;
    if (counted.eta_s !== null && state.status === "running") text += `, ETA ${formatDuration(counted.eta_s)}`;
    parts.push(text);
  }
  const cycle = state.cycle;
  if (cycle) parts.push(`cycle ${cycle.cycle}${cycle.total_cycles !== null ? ` of ${cycle.total_cycles}` : ""}`);
  return parts;
}

/** `1,200`: digits grouped by three, as Python's `f"{n:,}"`. */
function grouped(count: number): string {
  return String(count).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}
