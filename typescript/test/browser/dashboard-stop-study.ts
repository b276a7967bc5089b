// Stops a live Optuna study from the run page of `trainwire serve` in headless Chromium:
// `node dashboard-stop-study.js URL`. Once a trial has ended it presses *Stop run*, gives a
// reason and waits for the run to end interrupted. Prints one JSON line per check it passed;
// exits non-zero with the reason on the first failure (chromium-page.ts).
import type { Page } from "playwright-core";
import { drive, say, scriptArguments } from "./chromium-page.js";

const [url = ""] = scriptArguments(1, "node dashboard-stop-study.js URL");
const trials = (page: Page) =>
  page.evaluate(() =>
    [...document.querySelectorAll<HTMLTableRowElement>("#trials tbody tr")].map((row) => row.cells[1]?.textContent),
  );
await drive(async (page) => {
  const asked: string[] = [];
  page.on("dialog", (dialog) => {
    asked.push(dialog.message());
    void dialog.accept("enough trials");
  });
  await page.goto(url);
  await page.waitForSelector("#runs tbody tr", { timeout: 60_000 });
  await page.locator("#runs tbody tr").first().click();
  await page.waitForFunction(
    () =>
      [...document.querySelectorAll<HTMLTableRowElement>("#trials tbody tr")].some(
        (row) => row.cells[1]?.textContent === "succeeded",
      ),
    null,
    { timeout: 60_000 },
  );
  await page.waitForSelector("#stop:not([hidden])", { timeout: 30_000 });
  say("running", { trials: await trials(page) });
  await page.locator("#stop").click();
  await page.waitForFunction(() => document.querySelector("#run-status")?.textContent === "interrupted", null, {
    timeout: 60_000,
  });
  say("interrupted", { trials: await trials(page), stopHidden: await page.locator("#stop").isHidden(), asked });
});
