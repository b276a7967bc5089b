// Opens one run of `trainwire serve` in headless Chromium and times it:
// `node dashboard-page.js URL KEY BYTES` prints {first_chart_s, loaded_s, longest_task_ms,
// long_tasks, longest_tasks, longest_timer_gap_ms}: the first chart with a point, the whole
// stream read (BYTES), and the page's main-thread long tasks and 50 ms timer gaps until then.
// Compiled by `npm run build` (with the browser test helpers it drives the page with) into
// dist/test/bench/browser; tools/bench/served.py runs it.
import { drive, scriptArguments } from "../../test/browser/chromium-page.js";

/** [start ms, duration ms] of each main-thread long task; [at ms, gap ms] of each 50 ms timer tick. */
type Spans = [number, number][];

declare global {
  interface Window {
    benchLongTasks: Spans;
    benchGaps: Spans;
  }
}

const [url = "", key = "", bytes = ""] = scriptArguments(3, "node dashboard-page.js URL KEY BYTES");
const size = Number(bytes);
if (!Number.isSafeInteger(size) || size < 0) {
  console.error(`BYTES is a count of bytes, not ${JSON.stringify(bytes)}`);
  process.exit(2);
}

await drive(async (page) => {
  await page.addInitScript(() => {
    window.benchLongTasks = [];
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) window.benchLongTasks.push([entry.startTime, entry.duration]);
    }).observe({ type: "longtask", buffered: true });
    window.benchGaps = [];
    let last = performance.now();
    setInterval(() => {
      const now = performance.now();
      window.benchGaps.push([now, now - last]);
      last = now;
    }, 50);
  });
  await page.goto(`${url}#/run/${encodeURIComponent(key)}`);
  await page.waitForFunction(
    () => Number(document.querySelector<HTMLElement>('#charts [data-chart="loss"]')?.dataset["points"] || 0) > 0,
    null,
    { timeout: 300_000, polling: "raf" },
  );
  const firstChart = await page.evaluate(() => performance.now());
  await page.waitForFunction(
    (size) => Number(document.querySelector<HTMLElement>("#run-view")?.dataset["bytes"] || 0) >= size,
    size,
    { timeout: 300_000, polling: 50 },
  );
  const result = await page.evaluate((firstChart) => {
    const loaded = performance.now();
    const entries = window.benchLongTasks.filter(([start]) => start <= loaded);
    const tasks = entries.map(([, duration]) => duration);
    const gaps = window.benchGaps.filter(([at]) => at <= loaded).map(([, gap]) => gap);
    return {
      first_chart_s: firstChart / 1000,
      loaded_s: loaded / 1000,
      longest_task_ms: Math.max(0, ...tasks),
      long_tasks: tasks.length,
      // [start ms, duration ms] of the five longest, to tell loading the page from following the stream
      longest_tasks: entries
        .sort((a, b) => b[1] - a[1])
        .slice(0, 5)
        .map((entry) => entry.map(Math.round)),
      longest_timer_gap_ms: Math.max(0, ...gaps),
    };
  }, firstChart);
  console.log(JSON.stringify(result));
});
