// The charts of the dashboard and of `trainwire plot`: uPlot on a step axis, with markers.
// Which series go on which chart, and how curves and markers look, come from the chart
// specification (src/charts.ts), shared with the PNG/SVG plot.
import uPlot from "uplot";
import { CHART_SPEC, type ChartCurve, type ChartData, MARKER_STYLES } from "../src/charts.js";
import { formatQuantity } from "../src/humanize.js";

export interface Marker {
  kind: string;
  step: number | null;
  label: string | null;
  /** Seconds since the epoch, for the wall-clock axis. */
  time?: number;
  /** The drawn colour (the end marker's by the run's status); the kind's colour when absent. */
  colour?: string;
}

/** What the x axis shows: the step, the wall-clock time of each point, or (a search's outcomes) the trial. */
export type Axis = "step" | "time" | "trial";

/** What a chart draws: a chart of `chartList`, or a chart put together by the page (compare). */
export interface DrawnChart extends Pick<ChartData, "smoothing" | "log_scale"> {
  series: readonly Pick<ChartCurve, "label" | "sparse" | "steps" | "values" | "times">[];
  markers: readonly Marker[];
}

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

export function markerPlugin(markers: () => readonly Marker[], axis: () => Axis = () => "step"): uPlot.Plugin {
  return {
    hooks: {
      draw: [
        (plot: uPlot) => {
          const context = plot.ctx;
          const { top, height } = plot.bbox;
          context.save();
          for (const marker of markers()) {
            const at = axis() === "time" ? marker.time : marker.step;
            if (at === null || at === undefined) continue;
            const x = Math.round(plot.valToPos(at, "x", true));
            const style = MARKER_STYLES.get(marker.kind);
            if (style === undefined || x < plot.bbox.left || x > plot.bbox.left + plot.bbox.width) continue;
            context.strokeStyle = marker.colour ?? style.colour;
            context.lineWidth = style.width;
            context.setLineDash(style.dash);
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
  #axis: Axis = "step";
  #markers: readonly Marker[] = [];

  constructor(
    readonly title: string,
    container: HTMLElement,
  ) {
    this.root = document.createElement("div");
    this.root.className = "chart";
    this.root.dataset["chart"] = title;
    const heading = document.createElement("h4");
    heading.textContent = title;
    this.root.append(heading);
    container.append(this.root);
  }

  /** Draws a chart of `chartList`; `smoothing` and `log` are the page's settings, applied where the chart's rule allows. */
  update(chart: DrawnChart, pageSmoothing: number, pageLog: boolean, axis: Axis = "step"): void {
    this.#markers = chart.markers;
    const curves = chart.series;
    const smoothing = chart.smoothing ? pageSmoothing : 0;
    const log = pageLog && chart.log_scale;
    // what is drawn, for people's tools and the tests that compare it with the PNG/SVG plot
    this.root.dataset["series"] = JSON.stringify(curves.map((curve) => curve.label));
    this.root.dataset["markers"] = chart.markers.map((marker) => marker.kind).join(" ");
    this.root.dataset["axis"] = axis;
    const names = curves.map((curve) => curve.label);
    const tables = curves.map(
      (curve) => [axis === "time" ? curve.times : curve.steps, curve.values] as uPlot.AlignedData,
    );
    if (tables.length === 0) return;
    const joined = tables.length === 1 ? (tables[0] as uPlot.AlignedData) : uPlot.join(tables as uPlot.AlignedData[]);
    const data: uPlot.AlignedData = [
      joined[0],
      ...joined.slice(1).map((values) => {
        const ys = smooth([...(values as (number | null | undefined)[])], smoothing);
        return log ? ys.map((y) => (y !== null && y !== undefined && y > 0 ? y : null)) : ys;
      }),
    ] as uPlot.AlignedData;
    if (this.#plot === undefined || names.join() !== this.#names.join() || log !== this.#log || axis !== this.#axis) {
      this.#plot?.destroy();
      this.#names = names;
      this.#log = log;
      this.#axis = axis;
      const colours = CHART_SPEC.series.colours;
      this.#plot = new uPlot(
        {
          width: Math.max(320, this.root.clientWidth || 460),
          height: 240,
          scales: { x: { time: axis === "time" }, y: log ? { distr: 3 } : {} },
          axes: [
            // six-digit steps need room: at least 90 px between ticks
            axis === "time"
              ? { label: "time" }
              : { label: axis, space: 90, values: (_plot, splits) => tickLabels(splits) },
            { values: (_plot: uPlot, splits: number[]) => tickLabels(splits), size: 60 },
          ],
          series: [
            { label: axis },
            ...curves.map((curve, index) => ({
              label: curve.label,
              stroke: colours[index % colours.length] as string,
              width: CHART_SPEC.series.width,
              dash: curve.sparse ? CHART_SPEC.series.sparse.dash : [],
              spanGaps: curve.sparse,
            })),
          ],
          plugins: [
            markerPlugin(
              () => this.#markers,
              () => this.#axis,
            ),
          ],
        },
        data,
        this.root,
      );
    } else {
      this.#plot.setData(data);
    }
  }

  get points(): number {
    const data = this.#plot?.data;
    return data === undefined ? 0 : (data[0] as ArrayLike<number>).length;
  }
}

/**
 * An axis's tick labels for people (`120k`, `0.00123`, never an exponent): the one formatter,
 * or the exact numbers where three significant digits would make two ticks read alike.
 */
export function tickLabels(splits: readonly (number | null)[]): string[] {
  const short = splits.map((value) => (value === null ? "" : formatQuantity(value)));
  if (new Set(short).size === short.length) return short;
  return splits.map((value) => (value === null ? "" : String(Number(value.toPrecision(12)))));
}
