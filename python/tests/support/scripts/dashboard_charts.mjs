// Drives the run page of `trainwire serve` in headless Chromium (playwright-core, the system browser)
// on a failed run with every kind of metric and hostile text: `node dashboard_charts.mjs URL SCREENSHOT_DIR`.
// Prints one JSON line per check it passed; exits non-zero with the reason on the first failure.
import { readFileSync, mkdtempSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";

const require = createRequire(new URL("../../../../typescript/package.json", import.meta.url));
const { chromium } = require("playwright-core");
const [url, screenshots] = process.argv.slice(2);
const say = (check, detail = {}) => console.log(JSON.stringify({ check, ...detail }));

const context = await chromium.launchPersistentContext(mkdtempSync(path.join(tmpdir(), "trainwire-chromium-")), {
  executablePath: "/usr/bin/chromium",
  headless: true,
  acceptDownloads: true,
  viewport: { width: 1280, height: 900 },
  args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-sync"],
});
const errors = [];
try {
  const page = context.pages()[0] ?? (await context.newPage());
  page.on("pageerror", (error) => errors.push(String(error)));
  page.on("console", (message) => { if (/Content Security Policy/i.test(message.text())) errors.push(message.text()); });
  await page.goto(url);
  await page.waitForSelector("#runs tbody tr", { timeout: 30_000 });
  await page.locator("#runs tbody tr").first().click();
  await page.waitForFunction(() => document.querySelector("#run-status")?.textContent === "failed", null, { timeout: 30_000 });
  await page.waitForFunction(() => document.querySelector('[data-chart="reward"]') !== null, null, { timeout: 30_000 });
  const groups = await page.evaluate(() => [...document.querySelectorAll("#charts details")].filter((group) => !group.hidden).map((group) => ({
    kind: group.dataset.kind, open: group.open, charts: [...group.querySelectorAll("[data-chart]")].map((chart) => chart.dataset.chart),
  })));
  say("groups", { groups });

  const legend = await page.evaluate(() => [...document.querySelectorAll(".marker-legend li")].map((item) => [item.dataset.marker, item.dataset.colour]));
  say("legend", { legend });

  const [download] = await Promise.all([page.waitForEvent("download"), page.locator('[data-chart="grad norm"] button.csv').click()]);
  say("csv", { name: download.suggestedFilename(), text: readFileSync(await download.path(), "utf8") });

  await page.locator("#wall-clock").check();
  await page.waitForFunction(() => document.querySelector("#charts")?.dataset.axis === "time", null, { timeout: 10_000 });
  say("wall clock", { points: await page.evaluate(() => Number(document.querySelector('[data-chart="loss"]').dataset.points)) });
  await page.locator("#wall-clock").uncheck();

  const text = await page.evaluate(() => ({
    title: document.querySelector("#run-title").textContent,
    provenance: [...document.querySelectorAll("#provenance dd")].map((dd) => dd.textContent),
    config: document.querySelector("#config").textContent,
    progress: document.querySelector("#progress-text").textContent,
    overflow: document.documentElement.scrollWidth - window.innerWidth,
    hover: [...document.querySelectorAll("#provenance dd")].map((dd) => dd.title).filter(Boolean),
  }));
  say("text", text);
  await page.screenshot({ path: path.join(screenshots, "dashboard-charts.png"), fullPage: true });
  if (errors.length) throw new Error(`page errors: ${errors.join("; ")}`);
} catch (error) {
  console.error(String(error), errors.join("; "));
  process.exitCode = 1;
} finally {
  await context.close();
}
