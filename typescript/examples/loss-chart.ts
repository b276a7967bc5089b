import { type UPlotSeries, watchRun } from "trainwire";
import { fromFetch } from "trainwire/browser";

/**
 * Keeps a loss chart (e.g. uPlot's `chart.setData(data)`) up to date with the latest run
 * of the progress.jsonl served at `url`. Returns how the run ended, or "stopped" when
 * `signal` aborts.
 */
export async function chartLoss(
  url: string,
  draw: (data: UPlotSeries, title: string) => void,
  signal?: AbortSignal,
  warn = console.warn,
): Promise<string> {
  const updates = watchRun(
    (hooks) =>
      fromFetch(url, {
        ...hooks,
        pollIntervalMs: 1000,
        pauseWhenHidden: true,
        onError: (error) => warn(`${error.code}: ${error.message}`),
      }),
    { series: true, signal },
  );
  for await (const { state, series } of updates) {
    if (state === undefined || series === undefined) continue;
    draw(series.uplot("loss"), `${state.run_id}, attempt ${state.attempt}`); // steps on x, a gap at each restart
    if (state.finished !== null) return state.status;
  }
  return "stopped";
}
