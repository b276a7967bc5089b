// Shared by the Node and the in-page benches: no Node API here, so that a page can bundle it.
import { StreamReader } from "trainwire";

/** How much a reader is fed at a time (the Python bench uses the same). */
export const CHUNK_BYTES = 1 << 20;

/** Seconds `fn` took, after a full collection when the engine exposes `gc`. */
export function timed(fn) {
  globalThis.gc?.();
  const started = performance.now();
  const result = fn();
  return { seconds: (performance.now() - started) / 1000, result };
}

/** Events a `StreamReader` validated and folded; `forEachChunk(onChunk)` hands it the stream. */
export function readAndFold(forEachChunk) {
  const reader = new StreamReader();
  let events = 0;
  forEachChunk((chunk) => {
    for (const item of reader.feed(chunk)) if (item.kind !== "diagnostic") events += 1;
  });
  if (reader.latestRun() === undefined) throw new Error("the fold kept no run");
  return events;
}

/** The baseline: split the text into lines and `JSON.parse` each non-blank one, nothing checked. */
export function splitAndParse(text) {
  let events = 0;
  for (const line of text.split("\n")) {
    if (line.trim() !== "") {
      JSON.parse(line);
      events += 1;
    }
  }
  return events;
}

/**
 * Times `ours` and `baseline` in alternation, `rounds` times each (which goes first swaps
 * every round), after one untimed baseline that warms the JIT. Both must count the same events.
 */
export function alternate(rounds, ours, baseline) {
  const times = { ours: [], baseline: [] };
  const events = baseline();
  for (let round = 0; round < rounds; round++) {
    if (round % 2) times.baseline.push(timed(baseline).seconds);
    const { seconds, result } = timed(ours);
    times.ours.push(seconds);
    if (round % 2 === 0) times.baseline.push(timed(baseline).seconds);
    if (result !== events) throw new Error(`the reader gave ${result} events for ${events} valid lines`);
  }
  return { ...times, events };
}
