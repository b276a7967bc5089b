// The run page's trials: a table of every trial from the reader state (params, objective,
// duration, metrics; sorted by the header clicked, the best marked), the trials' loss curves
// overlaid and a chart of each ended trial's objective against its number with the best so far,
// shown once the run has trials.
import type { ChartData } from "../src/charts.js";
import { formatDuration, formatQuantity } from "../src/humanize.js";
import { printable } from "../src/printable.js";
import type { Trial, Trials } from "../src/types.js";
import { Chart } from "./chart.js";
import { element } from "./dom.js";
import { TrialCurves } from "./trial-curves.js";

type SortKey = number | string | null;

interface Column {
  title: string;
  cell: (trial: Trial, objective: number | null) => string;
  key: (trial: Trial, objective: number | null) => SortKey;
  className?: string;
}

const NONE = "–";

function quantity(value: unknown): string {
  return typeof value === "number"
    ? formatQuantity(value)
    : value === null || value === undefined
      ? NONE
      : String(value);
}

function pairs(values: Record<string, unknown>, separator: string): string {
  return Object.entries(values)
    .map(([name, value]) => `${name}${separator}${quantity(value)}`)
    .join(", ");
}

/** A trial's last evaluation, each metric with its value at the evaluation before: whether it
 * improves is the reader's to judge (the page does not know each metric's direction). */
function evaluationText(trial: Trial): string {
  const last = trial.last_eval;
  if (last === null || last === undefined) return NONE;
  const before = trial.previous_eval?.metrics ?? {};
  const values = Object.entries(last.metrics).map(([name, value]) =>
    Object.hasOwn(before, name)
      ? `${name} ${quantity(value)} (was ${quantity(before[name])})`
      : `${name} ${quantity(value)}`,
  );
  return `${last.split} @${last.step}: ${values.join(", ")}`;
}

const COLUMNS: readonly Column[] = [
  { title: "trial", cell: (trial) => String(trial.trial), key: (trial) => trial.trial },
  {
    title: "status",
    cell: (trial) =>
      trial.error === null ? trial.status : `${trial.status}: ${trial.error.type}: ${trial.error.message}`,
    key: (trial) => trial.status,
    className: "trial-status",
  },
  { title: "params", cell: (trial) => pairs(trial.params, "="), key: (trial) => pairs(trial.params, "=") },
  { title: "objective", cell: (_trial, objective) => quantity(objective), key: (_trial, objective) => objective },
  { title: "epoch", cell: (trial) => quantity(trial.epoch), key: (trial) => trial.epoch ?? null },
  { title: "last eval", cell: evaluationText, key: (trial) => trial.last_eval?.step ?? null },
  {
    title: "duration",
    cell: (trial) => (trial.duration_s === null ? NONE : formatDuration(trial.duration_s)),
    key: (trial) => trial.duration_s,
  },
  { title: "metrics", cell: (trial) => pairs(trial.metrics, " "), key: (trial) => pairs(trial.metrics, " ") },
];

/** Ascending; a trial without the value sorts last either way. */
function compare(a: SortKey, b: SortKey, descending: boolean): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1;
  const order = typeof a === "number" && typeof b === "number" ? a - b : String(a).localeCompare(String(b));
  return descending ? -order : order;
}

/** A trial's objective: its metric named as the best's, when that is a number. */
function objectiveOf(trial: Trial, metric: string | null): number | null {
  // an own metric only: a best naming `constructor` is no objective of Object.prototype
  const value = metric !== null && Object.hasOwn(trial.metrics, metric) ? trial.metrics[metric] : undefined;
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

export class TrialsPanel {
  readonly #table: HTMLTableElement;
  readonly #chartBox: HTMLElement;
  readonly #curves: TrialCurves;
  #chart: Chart | undefined;
  #sort: { column: number; descending: boolean } | null = null;
  #trials: Trials | null = null;
  /** The best's value as each `trial.ended` named it, by trial: the search decides, not the page. */
  readonly #bestAtEnd = new Map<number, number | null>();

  constructor(container: HTMLElement) {
    this.#table = container.querySelector("table") as HTMLTableElement;
    this.#chartBox = container.querySelector(".trials-chart") as HTMLElement;
    this.#chartBox.replaceChildren();
    this.#chartBox.hidden = true;
    this.#curves = new TrialCurves(container.querySelector(".trial-curves") as HTMLElement);
    const row = element("tr");
    row.append(
      ...COLUMNS.map((column, index) => {
        const header = element("th", column.title);
        header.title = `sort by ${column.title}`;
        header.addEventListener("click", () => {
          // a second click on the same header reverses the order
          const descending = this.#sort?.column === index && !this.#sort.descending;
          this.#sort = { column: index, descending };
          this.render(this.#trials);
        });
        return header;
      }),
    );
    this.#table.tHead?.replaceChildren(row);
    this.#table.tBodies[0]?.replaceChildren();
  }

  /** Keeps the best a `trial.ended` names, for the best-so-far line. */
  trialEnded(trial: number, best: { value: number | null } | undefined): void {
    if (best !== undefined) this.#bestAtEnd.set(trial, best.value);
  }

  /** Keeps the chart of the trials' losses from the worker's charts, drawn at the next `render`. */
  curves(data: ChartData | undefined): void {
    this.#curves.update(data);
  }

  render(trials: Trials | null): void {
    this.#trials = trials;
    const list = trials?.list ?? [];
    const metric = trials?.best?.metric ?? null;
    const rows = list.map((trial) => ({ trial, objective: objectiveOf(trial, metric) }));
    const sort = this.#sort;
    if (sort !== null) {
      const column = COLUMNS[sort.column] as Column;
      rows.sort((a, b) => compare(column.key(a.trial, a.objective), column.key(b.trial, b.objective), sort.descending));
    }
    [...(this.#table.tHead?.rows[0]?.cells ?? [])].forEach((header, index) => {
      header.dataset["sort"] = sort?.column === index ? (sort.descending ? "descending" : "ascending") : "";
    });
    this.#table.tBodies[0]?.replaceChildren(
      ...rows.map(({ trial, objective }) => {
        const row = element("tr", undefined, trial.trial === trials?.best?.trial ? "best" : undefined);
        row.append(
          ...COLUMNS.map((column) => element("td", printable(column.cell(trial, objective)), column.className)),
        );
        return row;
      }),
    );
    this.#curves.render(rows, trials?.best ?? null);
    this.#renderChart(list, metric);
  }

  #renderChart(list: readonly Trial[], metric: string | null): void {
    this.#chartBox.hidden = list.length === 0;
    const ended = list
      .filter((trial) => trial.status !== "running")
      .map((trial) => [trial.trial, objectiveOf(trial, metric)] as const)
      .filter((point): point is readonly [number, number] => point[1] !== null)
      .sort(([a], [b]) => a - b);
    if (metric === null || ended.length === 0) return;
    const steps = ended.map(([trial]) => trial);
    let best: number | null = null;
    const bestSoFar = steps.map((trial) => {
      best = this.#bestAtEnd.get(trial) ?? best;
      return best;
    });
    const curve = (label: string, values: (number | null)[]) => ({
      name: label,
      label,
      run: "",
      sparse: false,
      steps,
      values,
      times: [] as number[],
    });
    const data: ChartData = {
      title: `objective per trial (${metric})`,
      kind: "trials",
      smoothing: false,
      log_scale: false,
      series: [
        curve(
          metric,
          ended.map(([, value]) => value),
        ),
        curve("best so far", bestSoFar),
      ],
      markers: [],
    };
    this.#chart ??= new Chart("objective per trial", this.#chartBox);
    this.#chart.update(data, 0, false, "trial"); // its x axis counts trials, not steps
    // what is drawn, for people's tools and the tests
    this.#chart.root.dataset["points"] = JSON.stringify(
      steps.map((trial, index) => [trial, ended[index]?.[1], bestSoFar[index]]),
    );
  }
}
