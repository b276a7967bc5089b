// Drives the run page of `trainwire serve` in headless Chromium (playwright-core, the system browser)
// on a failed run with every kind of metric and hostile text: `node dashboard-charts.js URL SCREENSHOT_DIR`.
// Prints one JSON line per check it passed; exits non-zero with the reason on the first failure.
import { readFileSync } from "node:fs";
import path from "node:path";
import { drive, say, scriptArguments } from "./chromium-page.js";

const [url = "", screenshots = ""] = scriptArguments(2, "node dashboard-charts.js URL SCREENSHOT_DIR");
await drive(async (page) => {
  await page.goto(url);
  await page.waitForSelector("#runs tbody tr", { timeout: 30_000 });
  await page.locator("#runs tbody tr").first().click();
  await page.waitForFunction(() => document.querySelector("#run-status")?.textContent === "failed", null, {
    timeout: 30_000,
  });
  await page.waitForFunction(() => document.querySelector('[data-chart="reward"]') !== null, null, {
    timeout: 30_000,
  });
  const groups = await page.evaluate(() =>
    [...document.querySelectorAll<HTMLDetailsElement>("#charts details")]
      .filter((group) => !group.hidden)
      .map((group) => ({
        kind: group.dataset["kind"],
        open: group.open,
        charts: [...group.querySelectorAll<HTMLElement>("[data-chart]")].map((chart) => chart.dataset["chart"]),
      })),
  );
  say("groups", { groups });

  const legend = await page.evaluate(() =>
    [...document.querySelectorAll<HTMLElement>(".marker-legend li")].map((item) => [
      item.dataset["marker"],
      item.dataset["colour"],
    ]),
  );
  say("legend", { legend });

  const [download] = await Promise.all([
    page.waitForEvent("download"),
    page.locator('[data-chart="grad norm"] button.csv').click(),
  ]);
  say("csv", { name: download.suggestedFilename(), text: readFileSync(await download.path(), "utf8") });

  await page.locator("#wall-clock").check();
  await page.waitForFunction(() => document.querySelector<HTMLElement>("#charts")?.dataset["axis"] === "time", null, {
    timeout: 10_000,
  });
  say("wall clock", {
    points: await page.evaluate(() =>
      Number(document.querySelector<HTMLElement>('[data-chart="loss"]')?.dataset["points"]),
    ),
  });
  await page.locator("#wall-clock").uncheck();

  const text = await page.evaluate(() => ({
    title: document.querySelector("#run-title")?.textContent,
    provenance: [...document.querySelectorAll("#provenance dd")].map((dd) => dd.textContent),
    config: document.querySelector("#config")?.textContent,
    progress: document.querySelector("#progress-text")?.textContent,
    overflow: document.documentElement.scrollWidth - window.innerWidth,
    hover: [...document.querySelectorAll<HTMLElement>("#provenance dd")].map((dd) => dd.title).filter(Boolean),
  }));
  say("text", text);
  await page.screenshot({ path: path.join(screenshots, "dashboard-charts.png"), fullPage: true });
});
