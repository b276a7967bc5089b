// Opens one run of `trainwire serve` in headless Chromium and times it:
// `node dashboard_page.mjs URL KEY BYTES` prints {first_chart_s, loaded_s, longest_task_ms,
// long_tasks, longest_timer_gap_ms}: the first chart with a point, the whole stream read
// (BYTES), and the page's main-thread long tasks and 50 ms timer gaps until then.
import { drive } from "../../typescript/dist/test/browser/chromium-page.js";

const [url, key, bytes] = process.argv.slice(2);
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
  const timeout = { timeout: 300_000, polling: "raf" };
  await page.waitForFunction(() => Number(document.querySelector('#charts [data-chart="loss"]')?.dataset.points || 0) > 0, null, timeout);
  const firstChart = await page.evaluate(() => performance.now());
  await page.waitForFunction((size) => Number(document.querySelector("#run-view")?.dataset.bytes || 0) >= size, Number(bytes), { timeout: 300_000, polling: 50 });
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
      longest_tasks: entries.sort((a, b) => b[1] - a[1]).slice(0, 5).map((entry) => entry.map(Math.round)),
      longest_timer_gap_ms: Math.max(0, ...gaps),
    };
  }, firstChart);
  console.log(JSON.stringify(result));
});
