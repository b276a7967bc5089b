// Drives the run page of `trainwire serve` in headless Chromium (playwright-core, the system browser)
// on a sweep: `node dashboard-trials.js URL STATUS TRIALS` opens the one run, waits for its status
// and its TRIALS rows. Prints one JSON line per check it passed; exits non-zero with the reason on
// the first failure (chromium-page.ts).
import type { Page } from "playwright-core";
import { drive, say, scriptArguments } from "./chromium-page.js";

const [url = "", status = "", count = ""] = scriptArguments(3, "node dashboard-trials.js URL STATUS TRIALS");
const rows = (page: Page) =>
  page.evaluate(() =>
    [...document.querySelectorAll<HTMLTableRowElement>("#trials tbody tr")].map((row) => ({
      best: row.classList.contains("best"),
      cells: [...row.cells].map((cell) => cell.textContent),
    })),
  );
await drive(async (page) => {
  await page.goto(url);
  await page.waitForSelector("#runs tbody tr", { timeout: 30_000 });
  await page.locator("#runs tbody tr").first().click();
  await page.waitForFunction((expected) => document.querySelector("#run-status")?.textContent === expected, status, {
    timeout: 30_000,
  });
  await page.waitForFunction(
    (expected) => document.querySelectorAll("#trials tbody tr").length === expected,
    Number(count),
    { timeout: 30_000 },
  );
  const headers = await page.evaluate(() =>
    [...document.querySelectorAll("#trials thead th")].map((th) => th.textContent),
  );
  say("table", { headers, rows: await rows(page) });

  await page.waitForSelector("#trials-panel .trial-curves [data-trials]", { timeout: 30_000 });
  await page.waitForSelector("#trials-panel .trial-curves [data-chart] canvas", { timeout: 30_000 });
  const curves = await page.evaluate(() => {
    const box = document.querySelector<HTMLElement>("#trials-panel .trial-curves");
    const root = box?.querySelector<HTMLElement>("[data-chart]");
    const note = box?.querySelector<HTMLElement>(".trial-curves-note");
    return {
      hidden: box?.hidden,
      title: root?.dataset["chart"],
      trials: JSON.parse(root?.dataset["trials"] ?? "null") as unknown,
      series: JSON.parse(root?.dataset["series"] ?? "null") as unknown,
      canvas: root?.querySelector("canvas") !== null,
      note: note?.hidden ? null : note?.textContent,
      // a sweep's own charts would mix its trials: the trials panel's curves stand in for them
      runCharts: [...document.querySelectorAll<HTMLElement>("#charts [data-chart]")].map(
        (chart) => chart.dataset["chart"],
      ),
    };
  });
  say("curves", curves);

  const objective = page.locator("#trials thead th", { hasText: "objective" });
  await objective.click();
  await page.waitForFunction(() => document.querySelector("#trials thead th[data-sort='ascending']") !== null, null, {
    timeout: 10_000,
  });
  const ascending = await rows(page);
  await objective.click();
  await page.waitForFunction(() => document.querySelector("#trials thead th[data-sort='descending']") !== null, null, {
    timeout: 10_000,
  });
  say("sorted", { ascending, descending: await rows(page) });

  const chart = await page.evaluate(() => {
    const box = document.querySelector<HTMLElement>("#trials-panel .trials-chart");
    const root = box?.querySelector<HTMLElement>("[data-chart]");
    return {
      hidden: box?.hidden,
      points: JSON.parse(root?.dataset["points"] ?? "null") as unknown,
      series: JSON.parse(root?.dataset["series"] ?? "null") as unknown,
      canvas: root?.querySelector("canvas") !== null,
      // what the x axis counts, which its label says (uPlot draws the label on the canvas)
      axis: root?.dataset["axis"],
    };
  });
  say("chart", chart);
});
