// The run view's contract 1.1 progress: the running trial, a phase's per-item progress and the
// cycle, worded as `trainwire tail` words them (`trial 4/20, best 1.2 (trial 1)`, `eval 1,200/5,000 items, ETA 9.5s`,
// `cycle 2 of 5`).
import { formatDuration } from "../src/humanize.js";
import type { RunState } from "../src/index.js";

/** The parts of the progress line that trials, counted items and cycles add (none for a 1.0 run). */
export function runProgressParts(state: Readonly<RunState>): string[] {
  const parts: string[] = [];
  const running = state.trials.list?.filter((trial) => trial.status === "running").at(-1);
  if (running !== undefined) {
    let text = `trial ${running.trial}${state.trials.total ? `/${state.trials.total}` : ""}`;
    const best = state.trials.best;
    if (best && typeof best.value === "number") text += `, best ${significant(best.value)} (trial ${best.trial})`;
    parts.push(text);
  }
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

/** Four significant digits, as Python's `f"{value:.4g}"` (`0.412`, `1.235e+06`). */
function significant(value: number): string {
  if (value === 0 || !Number.isFinite(value)) return String(value);
  const [mantissa = "", exponent = "0"] = value.toExponential(3).split("e");
  const power = Number(exponent);
  if (power < -4 || power >= 4) {
    const digits = mantissa.replace(/\.?0+$/, "");
    return `${digits}e${power < 0 ? "-" : "+"}${String(Math.abs(power)).padStart(2, "0")}`;
  }
  return String(Number(value.toFixed(Math.max(0, 3 - power))));
}

/** `1,200`: digits grouped by three, as Python's `f"{n:,}"`. */
function grouped(count: number): string {
  return String(count).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}
