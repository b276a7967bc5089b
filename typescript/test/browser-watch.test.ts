// fromFetch and watchRun in a real Chromium against a Range-serving server: a 404 until the
// file appears, a 500 burst, replacement, truncation, and an abort in the middle of a body.
import assert from "node:assert/strict";
import { stat } from "node:fs/promises";
import { describe, it } from "node:test";
import { chromium, type Page } from "playwright-core";
import { bundleForBrowser, CHROMIUM, CHROMIUM_ARGS } from "./browser-helpers.js";
import { known, ndjson, utf8 } from "./helpers.js";
import { resource, withRangeServer } from "./range-server.js";

const PAGE = `<!doctype html><meta charset="utf-8"><title>trainwire watch</title><script type="module" src="/page.js"></script>`;

// The page keeps a log the test reads: updates of the watched run, fetch failures, resets, the end.
const PAGE_SCRIPT = `
import { watchRun } from "trainwire";
import { fromFetch } from "trainwire/browser";
const log = (window.log = { updates: [], errors: [], resets: 0, end: null });
const abort = (window.abort = new AbortController());
const source = (hooks) => fromFetch("/progress.jsonl", {
  ...hooks,
  pollIntervalMs: 20,
  maxBackoffMs: 50,
  signal: abort.signal,
  onReset: () => { log.resets += 1; hooks.onReset(); },
  onError: (error) => log.errors.push(error.status),
});
(async () => {
  for await (const update of watchRun(source, { signal: abort.signal, series: true })) {
    log.updates.push({ run: update.state?.run_id, step: update.state?.step, reset: update.reset, loss: update.series?.uplot("loss") });
  }
})().then(() => (log.end = "quiet"), (error) => (log.end = "error: " + error));
window.readStalled = async () => {
  const stop = new AbortController();
  const chunks = [];
  try {
    for await (const chunk of fromFetch("/progress.jsonl", { signal: stop.signal })) { chunks.push(chunk.length); stop.abort(); }
    return "quiet after " + chunks.join(",");
  } catch (error) {
    return "error: " + error;
  }
};
`;

interface PageLog {
  updates: { run?: string; step?: number | null; reset: boolean; loss?: [number[], (number | null)[]] }[];
  errors: (number | undefined)[];
  resets: number;
  end: string | null;
}

async function until(page: Page, condition: (log: PageLog) => boolean): Promise<PageLog> {
  const read = (): Promise<PageLog> => page.evaluate(() => (window as unknown as { log: PageLog }).log);
  // waitForFunction cannot take a Node closure: check the log as it changes instead.
  for (let log = await read(); ; log = await read()) {
    if (condition(log)) return log;
    await page.waitForTimeout(10);
  }
}

const steps = (run: string, from: number, to: number, seq: number): Record<string, unknown>[] =>
  Array.from({ length: to - from + 1 }, (_, index) =>
    known("train.step", seq + index, { step: from + index, loss: 1 / (from + index) }, run),
  );

describe("watchRun in a browser", () => {
  it("waits for the file, rides out a 500 burst, follows replacement and truncation, and ends quietly", async () => {
    await stat(CHROMIUM).catch(() => assert.fail(`${CHROMIUM} is missing: apt-get install chromium (make setup does)`));
    const stream = resource();
    const files = {
      "/": { type: "text/html", body: PAGE },
      "/page.js": { type: "text/javascript", body: await bundleForBrowser(PAGE_SCRIPT) },
    };
    await withRangeServer(
      stream,
      async (origin) => {
        const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
        try {
          const page = await browser.newPage();
          await page.goto(`${origin}/`);
          await until(page, (log) => log.errors.filter((status) => status === 404).length >= 2); // not there yet: a normal wait

          let text = ndjson(known("run.started", 1, {}, "a"), ...steps("a", 1, 3, 2));
          stream.body = utf8(text);
          let log = await until(page, (current) => current.updates.at(-1)?.step === 3);
          assert.equal(log.updates.at(-1)?.run, "a");

          stream.faults.push(500, 502, 500);
          text += ndjson(...steps("a", 4, 5, 5));
          stream.body = utf8(text);
          log = await until(page, (current) => current.updates.at(-1)?.step === 5);
          assert.deepEqual(
            log.errors.filter((status) => status !== 404),
            [500, 502, 500],
          );
          assert.deepEqual(log.updates.at(-1)?.loss?.[0], [1, 2, 3, 4, 5]);

          // Replaced by a larger file: the byte before the offset differs.
          text = ndjson(known("run.started", 1, {}, "b"), ...steps("b", 1, 6, 2));
          stream.body = utf8(text);
          stream.version += 1;
          log = await until(
            page,
            (current) => current.updates.at(-1)?.run === "b" && current.updates.at(-1)?.step === 6,
          );
          assert.equal(log.resets, 1);
          assert.ok(log.updates.some((update) => update.run === "b" && update.reset));

          // Truncated to a shorter file.
          stream.body = utf8(ndjson(known("run.started", 1, {}, "c")));
          stream.version += 1;
          log = await until(page, (current) => current.updates.at(-1)?.run === "c");
          assert.equal(log.resets, 2);

          await page.evaluate(() => (window as unknown as { abort: AbortController }).abort.abort());
          log = await until(page, (current) => current.end !== null);
          assert.equal(log.end, "quiet");

          stream.stallAfter = 10; // the next body stops after 10 bytes; the page aborts in the middle
          assert.equal(
            await page.evaluate(() => (window as unknown as { readStalled: () => Promise<string> }).readStalled()),
            "quiet after 10",
          );
          const idle = stream.sent.filter((bytes) => bytes === 1).length;
          assert.ok(idle >= 1, `idle polls transfer one byte: ${stream.sent.join(" ")}`);
        } finally {
          await browser.close();
        }
      },
      files,
    );
  });
});
