// Drives the `trainwire serve` page in headless Chromium (playwright-core, the system browser):
// `node dashboard-browser.js URL SCREENSHOT_DIR`. Prints one JSON line per check it passed;
// exits non-zero with the reason on the first failure.
import path from "node:path";
import { datasetNumber, drive, say, scriptArguments, waitForMarker } from "./chromium-page.js";

const [url = "", screenshots = ""] = scriptArguments(2, "node dashboard-browser.js URL SCREENSHOT_DIR");
const LOSS = '[data-chart="loss"]';

await drive(async (page) => {
  page.on("dialog", (dialog) => void dialog.accept("enough from the browser test"));
  await page.goto(url);
  if (new URL(page.url()).searchParams.has("token")) throw new Error("the token stays in the address bar");
  await page.waitForSelector("#runs tbody tr", { timeout: 30_000 });
  say("runs list", { rows: await page.locator("#runs tbody tr").count() });
  await page.screenshot({ path: path.join(screenshots, "dashboard-runs.png") });

  await page.locator("#runs tbody tr").first().click();
  await page.waitForFunction(
    () => Number(document.querySelector<HTMLElement>("#progress-text")?.dataset["step"] || 0) > 0,
    null,
    { timeout: 30_000 },
  );
  const stepOf = () => datasetNumber(page, "#progress-text", "step");
  const pointsOf = () => datasetNumber(page, LOSS, "points");
  const firstStep = await stepOf();
  const firstPoints = await pointsOf();
  await page.waitForFunction(
    (step) => Number(document.querySelector<HTMLElement>("#progress-text")?.dataset["step"] || 0) > step,
    firstStep + 5,
    { timeout: 30_000 },
  );
  await page.waitForFunction(
    ([selector, points]) => Number(document.querySelector<HTMLElement>(selector)?.dataset["points"] || 0) > points,
    [LOSS, firstPoints] as const,
    { timeout: 30_000 },
  );
  say("progress and curve advance", { from: firstStep, to: await stepOf(), points: await pointsOf() });

  await waitForMarker(page, LOSS, "restart", 30_000);
  say("restart marker");
  await page.screenshot({ path: path.join(screenshots, "dashboard-run.png"), fullPage: true });

  await page.locator("#stop").click();
  await page.waitForFunction(() => document.querySelector("#run-status")?.textContent === "interrupted", null, {
    timeout: 60_000,
  });
  say("stopped", { text: await page.locator("#progress-text").textContent() });
  await waitForMarker(page, LOSS, "finished", 30_000);
  const charts = await page.evaluate(() =>
    [...document.querySelectorAll<HTMLElement>("#charts [data-chart]")].map((chart) => ({
      title: chart.dataset["chart"],
      series: JSON.parse(chart.dataset["series"] ?? "[]") as unknown,
      markers: (chart.dataset["markers"] ?? "").split(" ").filter(Boolean),
    })),
  );
  say("charts", { charts });
  await page.screenshot({ path: path.join(screenshots, "dashboard-stopped.png"), fullPage: true });
});
