// The run page's charts: every chart of `chartList`, grouped by kind as the chart specification
// orders them (a collapsed kind starts folded), each with a CSV download; a legend of the markers
// drawn and a toggle between the step and the wall-clock axis.
import { CHART_SPEC, type ChartData, type ChartMarker, MARKER_STYLES } from "../src/charts.js";
import { printable } from "../src/printable.js";
import { type Axis, Chart } from "./chart.js";
import { chartCsv } from "./csv.js";

/** The axis the user picked, kept across runs for the tab. */
let pickedAxis: Axis = "step";

export class RunCharts {
  readonly #groups = new Map<string, { root: HTMLDetailsElement; body: HTMLElement }>();
  readonly #charts = new Map<string, { chart: Chart; data: ChartData }>();
  readonly #legend: HTMLElement;
  readonly #container: HTMLElement;
  #redraw: () => void = () => undefined;

  constructor(container: HTMLElement) {
    this.#container = container;
    const toolbar = document.createElement("div");
    toolbar.className = "chart-toolbar";
    const label = document.createElement("label");
    const toggle = document.createElement("input");
    toggle.type = "checkbox";
    toggle.id = "wall-clock";
    toggle.checked = pickedAxis === "time";
    toggle.addEventListener("change", () => {
      pickedAxis = toggle.checked ? "time" : "step";
      this.#redraw();
    });
    label.append(toggle, " wall-clock axis");
    this.#legend = document.createElement("ul");
    this.#legend.className = "marker-legend";
    toolbar.append(label, this.#legend);
    container.append(toolbar);
    for (const kind of CHART_SPEC.kinds) {
      const root = document.createElement("details");
      root.className = "chart-group";
      root.dataset["kind"] = kind.kind;
      root.open = !kind.collapsed;
      root.hidden = true; // until a chart of its kind appears
      const summary = document.createElement("summary");
      summary.textContent = kind.title;
      const body = document.createElement("div");
      body.className = "chart-grid";
      root.append(summary, body);
      container.append(root);
      this.#groups.set(kind.kind, { root, body });
    }
  }

  /** Whether the chart `title` is made already. */
  has(title: string): boolean {
    return this.#charts.has(title);
  }

  /** Removes the charts whose titles are not in `titles` (a newer run of the same stream). */
  keepOnly(titles: ReadonlySet<string>): void {
    for (const [title, entry] of this.#charts) {
      if (titles.has(title)) continue;
      entry.chart.root.remove();
      this.#charts.delete(title);
    }
  }

  /** Draws `drawn` (the charts of one run, from `chartList`) with the page's smoothing and log settings. */
  render(drawn: readonly ChartData[], smoothing: number, log: boolean): void {
    this.#redraw = () => this.render(drawn, smoothing, log);
    const order = new Map<string, HTMLElement[]>();
    for (const data of drawn) {
      const group = this.#groups.get(data.kind);
      if (group === undefined) continue;
      let entry = this.#charts.get(data.title);
      if (entry === undefined) {
        entry = { chart: new Chart(printable(data.title), group.body), data };
        this.#addDownload(entry.chart, data.title);
        this.#charts.set(data.title, entry);
      }
      entry.data = data;
      // a folded group's charts are drawn when it opens: uPlot needs the width
      if (group.root.open) entry.chart.update(data, smoothing, log, pickedAxis);
      entry.chart.root.dataset["points"] = String(entry.chart.points);
      group.root.hidden = false;
      order.set(data.kind, [...(order.get(data.kind) ?? []), entry.chart.root]);
    }
    // a chart that appears later still takes its place in the specification's order
    for (const [kind, roots] of order) {
      const body = this.#groups.get(kind)?.body as HTMLElement;
      if (roots.some((root, index) => body.children[index] !== root)) body.append(...roots);
    }
    for (const { root } of this.#groups.values()) root.ontoggle = () => this.#redraw();
    this.#renderLegend(drawn.flatMap((data) => data.markers));
  }

  #addDownload(chart: Chart, title: string): void {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "csv";
    button.textContent = "CSV";
    button.title = `download the series of ${printable(title)} as CSV`;
    button.addEventListener("click", () => {
      const data = this.#charts.get(title)?.data;
      if (data === undefined) return;
      const link = document.createElement("a");
      link.href = URL.createObjectURL(new Blob([chartCsv(data)], { type: "text/csv" }));
      link.download = `${title.replace(/[^A-Za-z0-9._-]+/g, "_")}.csv`;
      link.click();
      setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
    });
    chart.root.querySelector("h4")?.append(" ", button);
  }

  /** One entry per marker kind drawn (the end marker per final status), in the specification's order. */
  #renderLegend(markers: readonly ChartMarker[]): void {
    const seen = new Map<string, ChartMarker>();
    for (const marker of markers) {
      const key = marker.kind === "finished" ? `finished ${marker.label ?? ""}` : marker.kind;
      if (!seen.has(key)) seen.set(key, marker);
    }
    const kinds = CHART_SPEC.markers.map((style) => style.kind);
    const entries = [...seen.entries()].sort(([, a], [, b]) => kinds.indexOf(a.kind) - kinds.indexOf(b.kind));
    this.#legend.replaceChildren(
      ...entries.map(([key, marker]) => {
        const item = document.createElement("li");
        item.dataset["marker"] = key;
        const swatch = document.createElement("span");
        swatch.className = `swatch ${(MARKER_STYLES.get(marker.kind)?.dash.length ?? 0) > 0 ? "dashed" : "solid"}`;
        swatch.style.borderColor = marker.colour;
        item.dataset["colour"] = marker.colour;
        item.append(swatch, printable(key === "finished" ? "end" : key.replace("finished", "end:")));
        return item;
      }),
    );
    this.#legend.hidden = entries.length === 0;
    this.#container.dataset["axis"] = pickedAxis;
  }
}
