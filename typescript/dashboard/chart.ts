// The charts of the dashboard and of `trainwire plot`: uPlot on a step axis, with markers.
import uPlot from "uplot";
import type { RunSeries } from "../src/index.js";

export const MARKER_COLOURS: Record<string, string> = { restart: "#d92d20", checkpoint: "#98a2b3", eval: "#84adea", stop: "#dc6803", finished: "#12a150" };
export const SERIES_COLOURS = ["#2e6fd8", "#dc6803", "#12a150", "#7a5af8", "#d92d20", "#0e9384", "#c11574", "#667085"];

export interface Marker { kind: string; step: number | null; label: string | null }

export function smooth(values: (number | null | undefined)[], weight: number): (number | null | undefined)[] {
  if (weight <= 0) return values;
  // TensorBoard's debiased exponential moving average; a gap starts it afresh
  let last = 0;
  let count = 0;
  return values.map((value) => {
    if (value === null || value === undefined) {
      if (value === null) count = 0;
      return value;
    }
    last = last * weight + (1 - weight) * value;
    count += 1;
    return last / (1 - weight ** count);
  });
}

export function markerPlugin(markers: () => readonly Marker[]): uPlot.Plugin {
  return {
    hooks: {
      draw: [
        (plot: uPlot) => {
          const context = plot.ctx;
          const { top, height } = plot.bbox;
          context.save();
          for (const marker of markers()) {
            if (marker.step === null) continue;
            const x = Math.round(plot.valToPos(marker.step, "x", true));
            if (x < plot.bbox.left || x > plot.bbox.left + plot.bbox.width) continue;
            context.strokeStyle = MARKER_COLOURS[marker.kind] ?? "#98a2b3";
            context.lineWidth = marker.kind === "restart" || marker.kind === "stop" ? 2 : 1;
            context.setLineDash(marker.kind === "eval" ? [2, 3] : marker.kind === "restart" ? [6, 3] : []);
            context.beginPath();
            context.moveTo(x, top);
            context.lineTo(x, top + height);
            context.stroke();
          }
          context.restore();
        },
      ],
    },
  };
}

/** One chart: several named [steps, values] series on one step axis, with markers. */
export class Chart {
  readonly root: HTMLDivElement;
  #plot: uPlot | undefined;
  #names: string[] = [];
  #log = false;
  #markers: readonly Marker[] = [];

  constructor(readonly title: string, container: HTMLElement) {
    this.root = document.createElement("div");
    this.root.className = "chart";
    this.root.dataset["chart"] = title;
    const heading = document.createElement("h4");
    heading.textContent = title;
    this.root.append(heading);
    container.append(this.root);
  }

  update(series: Map<string, uPlot.AlignedData>, markers: readonly Marker[], smoothing: number, log: boolean): void {
    this.#markers = markers;
    const names = [...series.keys()];
    const tables = names.map((name) => series.get(name) as uPlot.AlignedData);
    if (tables.length === 0) return;
    const joined = tables.length === 1 ? (tables[0] as uPlot.AlignedData) : uPlot.join(tables as uPlot.AlignedData[]);
    const data: uPlot.AlignedData = [joined[0], ...joined.slice(1).map((values) => {
      const ys = smooth([...(values as (number | null | undefined)[])], smoothing);
      return log ? ys.map((y) => (y !== null && y !== undefined && y > 0 ? y : null)) : ys;
    })] as uPlot.AlignedData;
    if (this.#plot === undefined || names.join() !== this.#names.join() || log !== this.#log) {
      this.#plot?.destroy();
      this.#names = names;
      this.#log = log;
      this.#plot = new uPlot({
        width: Math.max(320, this.root.clientWidth || 460),
        height: 240,
        scales: { x: { time: false }, y: log ? { distr: 3 } : {} },
        axes: [{ label: "step" }, { values: (_plot: uPlot, splits: number[]) => splits.map(axisNumber), size: 60 }],
        series: [{ label: "step" }, ...names.map((name, index) => ({ label: seriesLabel(name), stroke: SERIES_COLOURS[index % SERIES_COLOURS.length] as string, width: 1.5, spanGaps: isEvaluation(name) }))],
        plugins: [markerPlugin(() => this.#markers)],
      }, data, this.root);
    } else {
      this.#plot.setData(data);
    }
  }

  get points(): number {
    const data = this.#plot?.data;
    return data === undefined ? 0 : (data[0] as ArrayLike<number>).length;
  }
}

/** `eval/<split>/<metric>` as people read it: `eval loss`, `test accuracy`. */
export function seriesLabel(name: string): string {
  const match = /^(.*?)eval\/([^/]+)\/([^/]+)$/.exec(name);
  return match === null ? name : `${match[1]}${match[2]} ${match[3]}`;
}

/** Evaluations are sparse: their points are joined across the steps between them. */
function isEvaluation(name: string): boolean {
  return /(^|\s)eval\//.test(name);
}

export function axisNumber(value: number | null): string {
  if (value === null) return "";
  if (value !== 0 && Math.abs(value) < 0.01) return value.toExponential(1);
  return String(Number(value.toPrecision(4)));
}

export function chartGroups(series: RunSeries): Map<string, Map<string, uPlot.AlignedData>> {
  const groups = new Map<string, Map<string, uPlot.AlignedData>>();
  const add = (group: string, name: string): void => {
    const [x, y] = series.uplot(name);
    if (x.length === 0) return;
    if (!groups.has(group)) groups.set(group, new Map());
    groups.get(group)?.set(name, [x, y] as uPlot.AlignedData);
  };
  for (const name of series.names()) {
    if (name === "loss" || name.endsWith("/loss")) add("loss", name);
    else if (name === "learning_rate") add("learning rate", name);
    else add(seriesLabel(name), name);
  }
  return groups;
}

