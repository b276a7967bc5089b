import { StreamReader } from "trainwire";
import { fromFetch } from "trainwire/browser";

/** Shows a live progress bar for the run whose progress.jsonl is served at `url`. */
export async function showProgress(
  url: string,
  bar: HTMLProgressElement,
  label: HTMLElement,
  pollIntervalMs = 1000,
): Promise<string> {
  let reader = new StreamReader();
  const stream = fromFetch(url, {
    pollIntervalMs,
    onReset: () => (reader = new StreamReader()), // the file was replaced: start afresh
  });
  for await (const chunk of stream) {
    reader.feed(chunk);
    const run = reader.runs().at(-1); // the latest run in the file
    if (run === undefined) continue;
    bar.max = 1;
    bar.value = run.progress ?? 0;
    if (run.finished !== null) {
      label.textContent = `finished: ${run.status}`;
      return run.status; // leaving the loop stops the polling
    }
    label.textContent = `step ${run.step ?? 0} of ${run.total_steps ?? "?"}, loss ${run.loss?.toFixed(3) ?? "n/a"}`;
  }
  return "stopped";
}
