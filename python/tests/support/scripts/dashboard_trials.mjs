// Drives the run page of `trainwire serve` in headless Chromium (playwright-core, the system browser)
// on a finished sweep: `node dashboard_trials.mjs URL`. Prints one JSON line per check it passed;
// exits non-zero with the reason on the first failure.
import { mkdtempSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";

const require = createRequire(new URL("../../../../typescript/package.json", import.meta.url));
const { chromium } = require("playwright-core");
const [url] = process.argv.slice(2);
const say = (check, detail = {}) => console.log(JSON.stringify({ check, ...detail }));

const context = await chromium.launchPersistentContext(mkdtempSync(path.join(tmpdir(), "trainwire-chromium-")), {
  executablePath: "/usr/bin/chromium",
  headless: true,
  viewport: { width: 1280, height: 900 },
  args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-sync"],
});
const errors = [];
const rows = (page) =>
  page.evaluate(() =>
    [...document.querySelectorAll("#trials tbody tr")].map((row) => ({
      best: row.classList.contains("best"),
      cells: [...row.cells].map((cell) => cell.textContent),
    })),
  );
try {
  const page = context.pages()[0] ?? (await context.newPage());
  page.on("pageerror", (error) => errors.push(String(error)));
  page.on("console", (message) => { if (/Content Security Policy/i.test(message.text())) errors.push(message.text()); });
  await page.goto(url);
  await page.waitForSelector("#runs tbody tr", { timeout: 30_000 });
  await page.locator("#runs tbody tr").first().click();
  await page.waitForFunction(() => document.querySelector("#run-status")?.textContent === "succeeded", null, { timeout: 30_000 });
  await page.waitForFunction(() => document.querySelectorAll("#trials tbody tr").length === 3, null, { timeout: 30_000 });
  const headers = await page.evaluate(() => [...document.querySelectorAll("#trials thead th")].map((th) => th.textContent));
  say("table", { headers, rows: await rows(page) });

  const objective = page.locator("#trials thead th", { hasText: "objective" });
  await objective.click();
  await page.waitForFunction(() => document.querySelector("#trials thead th[data-sort='ascending']") !== null, null, { timeout: 10_000 });
  const ascending = await rows(page);
  await objective.click();
  await page.waitForFunction(() => document.querySelector("#trials thead th[data-sort='descending']") !== null, null, { timeout: 10_000 });
  say("sorted", { ascending, descending: await rows(page) });

  const chart = await page.evaluate(() => {
    const box = document.querySelector("#trials-panel .trials-chart");
    const root = box?.querySelector("[data-chart]");
    return { hidden: box?.hidden, points: JSON.parse(root?.dataset.points ?? "null"), series: JSON.parse(root?.dataset.series ?? "null"), canvas: root?.querySelector("canvas") !== null };
  });
  say("chart", chart);
  if (errors.length) throw new Error(`page errors: ${errors.join("; ")}`);
} catch (error) {
  console.error(String(error), errors.join("; "));
  process.exitCode = 1;
} finally {
  await context.close();
}
