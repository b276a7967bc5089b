// The dashboard's column of the endings matrix (python/tests/endings/test_dashboard_column.py):
// `node dashboard-endings.js URL KEY...`. In one browser session, reads what the runs list and
// each run's page show of every served run. Prints one JSON line per run; exits non-zero with
// the reason on the first failure. What the page should say is the Python test's to judge.
import { drive, say, scriptArguments } from "./chromium-page.js";

const [url = "", ...keys] = scriptArguments(2, "node dashboard-endings.js URL KEY...");
const LIST_COLUMNS = ["status", "progress", "best_loss", "duration_s"];

await drive(async (page) => {
  await page.goto(url);
  await page.waitForFunction((count) => document.querySelectorAll("#runs tbody tr").length >= count, keys.length, {
    timeout: 30_000,
  });
  const listed = await page.evaluate(
    (columns) =>
      Object.fromEntries(
        [...document.querySelectorAll<HTMLTableRowElement>("#runs tbody tr")].map((tr) => [
          tr.dataset["key"],
          Object.fromEntries(
            columns.map((column) => [column, tr.querySelector(`td[data-column="${column}"]`)?.textContent ?? null]),
          ),
        ]),
      ),
    LIST_COLUMNS,
  );
  const runIds = await page.evaluate(() =>
    Object.fromEntries(
      [...document.querySelectorAll<HTMLTableRowElement>("#runs tbody tr")].map((tr) => [
        tr.dataset["key"],
        tr.querySelector('td[data-column="run_id"]')?.textContent,
      ]),
    ),
  );
  // the list filtered to none of them: a run's page takes its verdict whatever the list shows
  await page.locator("#filter").fill("\u2400 no run has this text");
  await page.waitForFunction(() => document.querySelectorAll("#runs tbody tr").length === 0, undefined, {
    timeout: 10_000,
  });
  for (const key of keys) {
    const runId = runIds[key];
    await page.evaluate((key) => {
      location.hash = `#/run/${encodeURIComponent(key)}`;
    }, key);
    // the page has read the run's stream to its end and judged it: its title, step and duration are up
    const shown = await page
      .waitForFunction(
        (runId) => {
          const progress = document.querySelector("#progress-text")?.textContent ?? "";
          const badge = document.querySelector("#run-status")?.textContent ?? "";
          return (
            (document.querySelector("#run-title")?.textContent ?? "").includes(runId ?? "\u0000") &&
            progress.includes("duration ") &&
            !progress.includes("duration –") &&
            badge !== "" &&
            !badge.startsWith("running")
          );
        },
        runId,
        { timeout: 4_000 },
      )
      .then(
        () => true,
        () => false, // what it shows instead is reported: the test says which part disagrees
      );
    say(key, {
      list: listed[key] ?? null,
      settled: shown,
      badge: await page.locator("#run-status").textContent(),
      progress: await page.locator("#progress-text").textContent(),
      step: await page.locator("#progress-text").getAttribute("data-step"),
    });
  }
});
