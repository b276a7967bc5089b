// The trials panel's loss curves: each trial's `trial/<n>/loss` series overlaid in one chart,
// labelled by trial number. A sweep of many trials draws a bounded number: the running trials
// (the newest few) and the best by objective, as the note under the chart says.
import { type ChartCurve, type ChartData, TRIALS_KIND } from "../src/charts.js";
import type { Trial } from "../src/types.js";
import { Chart } from "./chart.js";
import { element } from "./dom.js";

/** The kind of the chart of the trials' losses: drawn here, not among the run's charts. */
export const TRIAL_CURVES_KIND = TRIALS_KIND;
/** At most this many curves: as many as the chart's colours, so each trial keeps its own. */
export const MAX_DRAWN_TRIALS = 8;
/** Of them, at most this many running trials, so the best always have room. */
const MAX_RUNNING = 3;

const TRIAL_SERIES = /^trial\/(\d+)\/loss$/;

export interface RankedTrial {
  trial: Trial;
  /** Its objective (the metric the best names), when it has one. */
  objective: number | null;
}

interface Picked {
  trials: Set<number>;
  note: string;
}

/**
 * The trials drawn among those with a curve: all of them when they fit; else the newest running
 * ones, then the best ended ones by objective (the search's direction read off the best it
 * named), then, without a best, the latest ended.
 */
export function pickTrials(
  ranked: readonly RankedTrial[],
  withCurve: ReadonlySet<number>,
  best: { value: number | null; metric: string } | null,
): Picked {
  const candidates = ranked.filter(({ trial }) => withCurve.has(trial.trial));
  if (candidates.length <= MAX_DRAWN_TRIALS)
    return { trials: new Set(candidates.map(({ trial }) => trial.trial)), note: "" };
  const newestFirst = [...candidates].sort((a, b) => b.trial.trial - a.trial.trial);
  const running = newestFirst.filter(({ trial }) => trial.status === "running").slice(0, MAX_RUNNING);
  const ended = newestFirst.filter(({ trial }) => trial.status !== "running");
  const room = MAX_DRAWN_TRIALS - running.length;
  const objectives = ended.flatMap(({ objective }) => (objective === null ? [] : [objective]));
  const bestValue = best?.value ?? null;
  let chosen: RankedTrial[];
  let how: string;
  if (best !== null && bestValue !== null && objectives.length > 0) {
    // the best the search named is the lowest objective when it minimises
    const sign = objectives.every((value) => bestValue <= value) ? 1 : -1;
    chosen = ended
      .filter(({ objective }) => objective !== null)
      .sort((a, b) => sign * ((a.objective as number) - (b.objective as number)))
      .slice(0, room);
    how = `the best ${chosen.length} by ${best.metric}`;
  } else {
    chosen = ended.slice(0, room);
    how = `the last ${chosen.length} ended`;
  }
  const trials = new Set([...running, ...chosen].map(({ trial }) => trial.trial));
  const runningText = running.length > 0 ? ` and the ${running.length} running` : "";
  return { trials, note: `${trials.size} of ${candidates.length} trials drawn: ${how}${runningText}` };
}

export class TrialCurves {
  readonly #box: HTMLElement;
  readonly #note: HTMLElement;
  #chart: Chart | undefined;
  #data: ChartData | undefined;

  constructor(box: HTMLElement) {
    this.#box = box;
    this.#note = element("p", undefined, "trial-curves-note");
    this.#box.replaceChildren(this.#note);
    this.#box.hidden = true;
  }

  /** Keeps the chart of the trials' losses the worker made (none before a trial's first loss). */
  update(data: ChartData | undefined): void {
    this.#data = data;
  }

  render(ranked: readonly RankedTrial[], best: { value: number | null; metric: string } | null): void {
    const data = this.#data;
    const byTrial = new Map<number, ChartCurve>();
    for (const curve of data?.series ?? []) {
      const trial = TRIAL_SERIES.exec(curve.name)?.[1];
      if (trial !== undefined) byTrial.set(Number(trial), curve);
    }
    const picked = pickTrials(ranked, new Set(byTrial.keys()), best);
    const drawn = [...picked.trials].sort((a, b) => a - b);
    this.#box.hidden = data === undefined || drawn.length === 0;
    if (data === undefined || drawn.length === 0) return;
    this.#chart ??= new Chart(data.title, this.#box);
    this.#box.append(this.#note); // under the chart
    this.#chart.update(
      {
        smoothing: false,
        log_scale: false,
        markers: [],
        series: drawn.map((trial) => byTrial.get(trial) as ChartCurve),
      },
      0,
      false,
    );
    this.#note.textContent = picked.note;
    this.#note.hidden = picked.note === "";
    // what is drawn, for people's tools and the tests
    this.#chart.root.dataset["trials"] = JSON.stringify(drawn);
  }
}
