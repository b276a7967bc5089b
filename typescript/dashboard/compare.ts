// Compare: any chart across the picked runs, live, each run read by its own decoding worker into
// the same bounded series store the run page uses; the config values that differ, as a table;
// a clear line for each run that cannot be opened.
import type { ChartData } from "../src/charts.js";
import { Chart } from "./chart.js";
import { configText, element } from "./dom.js";
import { follow } from "./feed.js";
import { byId, ID, required } from "./page-ids.js";

interface Compared {
  key: string;
  /** The run's charts, as its worker made them. */
  charts: ChartData[];
  /** The run's config, flattened (a Map: a key like `constructor` is only data); undefined until its `run.started` was read. */
  config: ReadonlyMap<string, unknown> | undefined;
  problem: string | null;
}

const DEFAULT_CHART = "loss";

export function openCompare(
  keys: string[],
  token: string,
  pollIntervalMs: number,
  signal: AbortSignal,
  smoothing: () => number,
): void {
  const runs = keys.map((key): Compared => ({ key, charts: [], config: undefined, problem: null }));
  const picker = required(ID.compareMetric, HTMLSelectElement);
  const container = byId(ID.compareChart);
  container.replaceChildren();
  byId(ID.compareConfig).replaceChildren();
  byId(ID.compareProblems).replaceChildren();
  picker.replaceChildren();
  byId(ID.compareNote).textContent = keys.length
    ? `${keys.length} run(s), overlaid on the step axis, live.`
    : "Pick runs in the list, then Compare selected.";
  let chart: Chart | undefined;
  let pending = false;
  const draw = (): void => {
    pending = false;
    const drawn = overlaid(runs);
    const titles = drawn.map((data) => data.title);
    if (titles.join("\n") !== [...picker.options].map((option) => option.value).join("\n")) {
      const chosen = picker.value || DEFAULT_CHART;
      picker.replaceChildren(...titles.map((title) => new Option(title, title, false, title === chosen)));
    }
    const data = drawn.find((candidate) => candidate.title === picker.value);
    if (data === undefined) return;
    if (chart?.title !== data.title) {
      container.replaceChildren();
      chart = new Chart(data.title, container);
    }
    // the runs' curves only: every run's markers on one chart hide the curves
    chart.update({ ...data, markers: [] }, smoothing(), false);
    chart.root.dataset["points"] = String(chart.points);
  };
  const redraw = (): void => {
    if (!pending) {
      pending = true;
      requestAnimationFrame(draw);
    }
  };
  picker.onchange = redraw;
  for (const run of runs) {
    follow(run.key, token, pollIntervalMs, signal, (message) => {
      switch (message.kind) {
        case "missing":
          run.problem = "no such run on the server (yet): it is drawn once its stream appears";
          break;
        case "failed":
          run.problem = `cannot be read: ${message.message}`;
          break;
        case "update": {
          run.problem = null;
          run.charts = message.charts;
          for (const event of message.events) if (event.event === "run.started") run.config = flat(event.config ?? {});
          renderConfig(runs);
          redraw();
          break;
        }
        case "state":
          return;
      }
      renderProblems(runs);
    });
  }
}

/** The runs' charts overlaid by title, each curve labelled with its run's folder, in first-seen order. */
function overlaid(runs: Compared[]): ChartData[] {
  const charts = new Map<string, ChartData>();
  for (const run of runs)
    for (const chart of run.charts) {
      const into = charts.get(chart.title) ?? { ...chart, series: [], markers: [] };
      into.series.push(...chart.series.map((curve) => ({ ...curve, label: `${run.key} ${curve.label}` })));
      charts.set(chart.title, into);
    }
  return [...charts.values()];
}

function renderProblems(runs: Compared[]): void {
  byId(ID.compareProblems).replaceChildren(
    ...runs.filter((run) => run.problem !== null).map((run) => element("li", `${run.key}: ${run.problem}`, "problem")),
  );
}

/** The config keys whose values differ between the runs read so far (a key one run lacks differs too). */
function renderConfig(all: Compared[]): void {
  const runs = all.filter((run) => run.config !== undefined);
  const names = [...new Set(runs.flatMap((run) => [...(run.config?.keys() ?? [])]))].sort();
  const differing = names.filter((name) => new Set(runs.map((run) => JSON.stringify(run.config?.get(name)))).size > 1);
  const table = byId(ID.compareConfig);
  const head = element("tr");
  head.append(element("th", "config"), ...runs.map((run) => element("th", run.key)));
  const rows = differing.map((name) => {
    const tr = element("tr");
    tr.append(element("td", name), ...runs.map((run) => element("td", configText(run.config?.get(name)))));
    return tr;
  });
  table.replaceChildren(head, ...rows);
  if (differing.length === 0)
    table.replaceChildren(element("caption", runs.length > 1 ? "the configs are the same" : ""));
}

/** Nested config values under dotted names, lists and other values as JSON. */
function flat(config: Record<string, unknown>, prefix = "", out = new Map<string, unknown>()): Map<string, unknown> {
  for (const [name, value] of Object.entries(config)) {
    if (value !== null && typeof value === "object" && !Array.isArray(value))
      flat(value as Record<string, unknown>, `${prefix}${name}.`, out);
    else out.set(`${prefix}${name}`, value !== null && typeof value === "object" ? JSON.stringify(value) : value);
  }
  return out;
}
