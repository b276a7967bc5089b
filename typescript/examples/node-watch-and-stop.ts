import path from "node:path";
import { StreamReader } from "trainwire";
import { followFile, requestStop } from "trainwire/node";

/**
 * Follows a run's progress.jsonl and asks the run to stop cleanly once its loss is below
 * `targetLoss`. Returns how the run ended.
 */
export async function stopWhenGoodEnough(outputDir: string, targetLoss: number, log = console.log): Promise<string> {
  let reader = new StreamReader();
  let stopAsked = false;
  const stream = followFile(path.join(outputDir, "progress.jsonl"), {
    pollIntervalMs: 100,
    onReset: () => (reader = new StreamReader()),
  });
  for await (const chunk of stream) {
    for (const item of reader.feed(chunk)) {
      if (item.kind === "diagnostic") log(`skipped line ${item.line}: ${item.diagnostic.message}`);
    }
    const run = reader.runs().at(-1);
    if (run === undefined) continue;
    if (run.finished !== null) return run.status; // leaving the loop closes the file
    log(`step ${run.step ?? 0}/${run.total_steps ?? "?"} loss ${run.loss ?? "n/a"}`);
    if (!stopAsked && run.loss !== null && run.loss < targetLoss) {
      await requestStop(outputDir, { reason: `loss below ${targetLoss}`, requestedBy: "stop-when-good-enough" });
      stopAsked = true;
    }
  }
  return "unknown";
}
