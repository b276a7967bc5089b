// The charts of one or more runs, as the chart specification (charts/charts.json) groups their
// series. Browser-safe. The Python twin (trainwire.reader.charts) gives the same list for the
// same runs: the dashboard and the HTML plot draw this one, the PNG/SVG plot draws Python's.
import { CHART_PATTERNS, CHART_SPEC, type MarkerStyle } from "./generated/charts.js";
import type { MarkerKind, RunSeries } from "./series.js";

export { CHART_SPEC };

/** A chart's place and treatment, from the rule that took the series. */
export interface ChartHeading {
  title: string;
  kind: string;
  smoothing: boolean;
  log_scale: boolean;
}

export interface ChartCurve {
  name: string;
  /** What the legend shows: the run id first when runs overlay. */
  label: string;
  run: string;
  /** Sparse curves (evaluations) are dashed and joined across the steps between their points. */
  sparse: boolean;
  steps: number[];
  /** `null` where a restart breaks the line. */
  values: (number | null)[];
  /** Seconds since the epoch of each value, for a wall-clock axis. */
  times: number[];
}

export interface ChartMarker {
  run: string;
  kind: MarkerKind;
  step: number | null;
  label: string | null;
  /** Seconds since the epoch. */
  time: number;
  /** By its label where the style lists it (the end marker by the run's final status). */
  colour: string;
}

export interface ChartData extends ChartHeading {
  series: ChartCurve[];
  markers: ChartMarker[];
}

/** The kind of the chart of a sweep's per-trial curves (charts/charts.json). */
export const TRIALS_KIND = "trials";

const KIND_ORDER = new Map(CHART_SPEC.kinds.map((entry, index) => [entry.kind, index]));
// compiled by the generator with the `s` flag, so a name with a line break lands as in Python
const RULES = CHART_SPEC.charts.map((rule, index) => ({ pattern: CHART_PATTERNS[index] as RegExp, rule }));
const SPARSE = CHART_PATTERNS[CHART_PATTERNS.length - 1] as RegExp;
/** How each marker kind is drawn, by kind; a marker of a kind not listed is not drawn. */
export const MARKER_STYLES: ReadonlyMap<string, MarkerStyle> = new Map(
  CHART_SPEC.markers.map((marker) => [marker.kind, marker]),
);

/** The chart a series goes on: the first rule whose pattern matches its name (the last matches all). */
export function chartOf(name: string): ChartHeading {
  for (const { pattern, rule } of RULES) {
    const match = pattern.exec(name);
    if (match === null) continue;
    // `$1` in a title is the rule's first group
    const title = rule.title.replace(/\$(\d)/g, (_all, number: string) => match[Number(number)] ?? "");
    return { title, kind: rule.kind, smoothing: rule.smoothing, log_scale: rule.log_scale };
  }
  throw new Error(`no chart takes ${JSON.stringify(name)}: the specification's last rule must match every name`);
}

/**
 * A series name as people read it: `eval/<split>/<metric>` as `eval loss`, `test accuracy`;
 * `trial/<n>/loss` as `trial <n>`; `metrics/<name>` as `<name>`.
 */
export function seriesLabel(name: string): string {
  const parts = name.split("/");
  if (parts.length === 3 && parts[0] === "eval") return `${parts[1]} ${parts[2]}`;
  if (parts.length === 3 && parts[0] === "trial" && parts[2] === "loss") return `trial ${parts[1]}`;
  return name.startsWith("metrics/") ? name.slice("metrics/".length) : name;
}

/** A drawn marker's colour: by its label where the style lists it (the end by the final status). */
export function markerColour(kind: string, label: string | null): string {
  const style = MARKER_STYLES.get(kind);
  if (style === undefined) throw new Error(`no marker style for ${JSON.stringify(kind)}`);
  const colours = style.label_colours ?? {};
  // an own label only: a label like `constructor` is not a colour of Object.prototype
  return label !== null && Object.hasOwn(colours, label) ? (colours[label] as string) : style.colour;
}

/**
 * The charts of `runs` ([run id, history]): each with its title, kind, whether smoothing and a
 * log scale apply, its curves and the drawn markers of the runs on it. Charts come in the order
 * of their kinds, then of first appearance; a label starts with the run id when runs overlay.
 * A run with per-trial curves (a sweep) gives those alone: its run-level series put every
 * trial's steps on one line (`drawnNames`).
 */
export function chartList(runs: readonly (readonly [runId: string, history: RunSeries])[]): ChartData[] {
  const charts = new Map<string, ChartData>();
  for (const [runId, history] of runs) {
    const prefix = runs.length > 1 ? `${runId} ` : "";
    const markers = history
      .markers()
      .filter((marker) => MARKER_STYLES.has(marker.kind))
      .map((marker) => ({
        run: runId,
        kind: marker.kind,
        step: marker.step,
        label: marker.label,
        time: marker.time_us / 1_000_000,
        colour: markerColour(marker.kind, marker.label),
      }));
    for (const [name, heading] of drawnNames(history)) {
      const [steps, values, times] = history.curve(name);
      if (steps.length === 0) continue;
      let chart = charts.get(heading.title);
      if (chart === undefined) {
        chart = { ...heading, series: [], markers: [] };
        charts.set(heading.title, chart);
      }
      chart.series.push({
        name,
        label: prefix + seriesLabel(name),
        run: runId,
        sparse: SPARSE.test(name),
        steps,
        values,
        times,
      });
      if (!chart.markers.some((marker) => marker.run === runId)) chart.markers.push(...markers);
    }
  }
  // sort is stable: first appearance within a kind
  return [...charts.values()].sort((a, b) => (KIND_ORDER.get(a.kind) ?? 0) - (KIND_ORDER.get(b.kind) ?? 0));
}

/**
 * The run's series drawn, each with its chart: all of them, or only the per-trial curves
 * (`TRIALS_KIND`) when it has any, in place of the run-level ones that mix the trials.
 */
export function drawnNames(history: RunSeries): [name: string, heading: ChartHeading][] {
  const named = history.names().map((name): [string, ChartHeading] => [name, chartOf(name)]);
  const trials = named.filter(([, heading]) => heading.kind === TRIALS_KIND);
  return trials.length > 0 ? trials : named;
}
