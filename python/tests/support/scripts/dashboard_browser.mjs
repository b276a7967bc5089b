// Drives the `trainwire serve` page in headless Chromium (playwright-core, the system browser):
// `node dashboard_browser.mjs URL SCREENSHOT_DIR`. Prints one JSON line per check it passed;
// exits non-zero with the reason on the first failure.
import path from "node:path";
import { drive, say } from "./chromium_page.mjs";

const [url, screenshots] = process.argv.slice(2);
await drive(async (page) => {
  page.on("dialog", (dialog) => dialog.accept("enough from the browser test"));
  await page.goto(url);
  if (new URL(page.url()).searchParams.has("token")) throw new Error("the token stays in the address bar");
  await page.waitForSelector("#runs tbody tr", { timeout: 30_000 });
  say("runs list", { rows: await page.locator("#runs tbody tr").count() });
  await page.screenshot({ path: path.join(screenshots, "dashboard-runs.png") });

  await page.locator("#runs tbody tr").first().click();
  await page.waitForFunction(() => Number(document.querySelector("#progress-text")?.dataset.step || 0) > 0, null, { timeout: 30_000 });
  const stepOf = () => page.evaluate(() => Number(document.querySelector("#progress-text").dataset.step));
  const pointsOf = () => page.evaluate(() => Number(document.querySelector('[data-chart="loss"]')?.dataset.points || 0));
  const firstStep = await stepOf();
  const firstPoints = await pointsOf();
  await page.waitForFunction(([step]) => Number(document.querySelector("#progress-text").dataset.step) > step, [firstStep + 5], { timeout: 30_000 });
  await page.waitForFunction(([points]) => Number(document.querySelector('[data-chart="loss"]')?.dataset.points || 0) > points, [firstPoints], { timeout: 30_000 });
  say("progress and curve advance", { from: firstStep, to: await stepOf(), points: await pointsOf() });

  await page.waitForFunction(() => (document.querySelector('[data-chart="loss"]')?.dataset.markers ?? "").split(" ").includes("restart"), null, { timeout: 30_000 });
  say("restart marker");
  await page.screenshot({ path: path.join(screenshots, "dashboard-run.png"), fullPage: true });

  await page.locator("#stop").click();
  await page.waitForFunction(() => document.querySelector("#run-status")?.textContent === "interrupted", null, { timeout: 60_000 });
  say("stopped", { text: await page.locator("#progress-text").textContent() });
  await page.waitForFunction(() => (document.querySelector('[data-chart="loss"]')?.dataset.markers ?? "").split(" ").includes("finished"), null, { timeout: 30_000 });
  const charts = await page.evaluate(() => [...document.querySelectorAll("#charts [data-chart]")].map((chart) => ({
    title: chart.dataset.chart, series: JSON.parse(chart.dataset.series ?? "[]"), markers: (chart.dataset.markers ?? "").split(" ").filter(Boolean),
  })));
  say("charts", { charts });
  await page.screenshot({ path: path.join(screenshots, "dashboard-stopped.png"), fullPage: true });
});
