// Drives the `trainwire serve` page over the runs test_dashboard_page.py writes:
// `node dashboard-page.js all|single URL SCREENSHOT_DIR`. Prints one JSON line per check it
// passed; exits non-zero with the reason on the first failure.
import path from "node:path";
import type { Page } from "playwright-core";
import { datasetNumber, drive, say, scriptArguments } from "./chromium-page.js";

const USAGE = "node dashboard-page.js all|single|twice URL SCREENSHOT_DIR";
const [mode = "", url = "", screenshots = ""] = scriptArguments(3, USAGE);
if (mode !== "all" && mode !== "single" && mode !== "twice") {
  console.error(`usage: ${USAGE}`);
  process.exit(2);
}
/** The one run that does not exist: the one request allowed to fail. */
const MISSING = "nope-never-written";
const LOSS = '[data-chart="loss"]';
const COMPARE_LOSS = `#compare-chart ${LOSS}`;

/** How long the page may take to show what a check waits for. */
const WAIT = { timeout: 30_000 };

/** The texts of the runs list's cells of `column`, top to bottom. */
function cells(page: Page, column: string): Promise<string[]> {
  return page.evaluate(
    (column) =>
      [...document.querySelectorAll(`#runs tbody td[data-column="${column}"]`)].map((td) => td.textContent ?? ""),
    column,
  );
}

/** Waits until the runs list shows `count` rows, the first of them folder `key` when given. */
async function untilRows(page: Page, count: number, key?: string): Promise<void> {
  await page.waitForFunction(
    ([count, key]) =>
      document.querySelectorAll("#runs tbody tr").length === count &&
      (key === null || document.querySelector('#runs tbody td[data-column="key"]')?.textContent === key),
    [count, key ?? null] as const,
    WAIT,
  );
}

/** Waits until the runs list's folders are `folders` (in any order). */
async function untilFolders(page: Page, folders: string[]): Promise<void> {
  await page.waitForFunction(
    (wanted) =>
      [...document.querySelectorAll('#runs tbody td[data-column="key"]')]
        .map((td) => td.textContent ?? "")
        .sort()
        .join() === wanted,
    folders.slice().sort().join(),
    WAIT,
  );
}

function shot(page: Page, name: string): Promise<Buffer> {
  return page.screenshot({ path: path.join(screenshots, name), fullPage: true });
}

async function open(page: Page, hash: string): Promise<void> {
  await page.evaluate((hash) => {
    location.hash = hash;
  }, hash);
}

function runHash(key: string): string {
  return `#/run/${encodeURIComponent(key)}`;
}

async function singleRunDirectory(page: Page): Promise<void> {
  const [folder] = await cells(page, "key");
  await page.locator("#runs tbody tr").first().click();
  await page.waitForFunction(
    (least) => Number(document.querySelector<HTMLElement>("#progress-text")?.dataset["step"] || 0) >= least,
    20,
    WAIT,
  );
  say("single run directory", { folder, step: await datasetNumber(page, "#progress-text", "step") });
}

/** A directory written by two runs one after the other: both listed, under the directory. */
async function twoRunsOfADirectory(page: Page): Promise<void> {
  await untilRows(page, 2);
  const folders = await cells(page, "key");
  const runs = await cells(page, "run_id");
  const continued = await page.evaluate(() =>
    [...document.querySelectorAll("#runs tbody tr")].map((tr) => tr.classList.contains("same-folder")),
  );
  await shot(page, "dashboard-page-twice.png");
  say("every run of a directory", { folders, runs, continued });
}

async function runsList(page: Page): Promise<void> {
  // every run of a directory, the one its resume followed too, under the directory
  await untilFolders(page, ["alpha-resumed", "alpha-resumed", "beta-failed", "delta-live", "gamma-stale"]);
  const folders = await cells(page, "key");
  const notes = await cells(page, "notes");
  const alpha = folders.indexOf("alpha-resumed");
  if (folders[alpha + 1] !== "alpha-resumed") throw new Error(`a directory's runs apart: ${folders}`);
  if (!notes.includes("resumed after preemption")) throw new Error(`notes: ${notes}`);
  say("folders and notes");

  const [names, tags] = [await cells(page, "name"), await cells(page, "tags")];
  if (!names.includes("beta sweep") || !tags.includes("baseline, fp16"))
    throw new Error(`names ${names}, tags ${tags}`);
  await page.fill("#filter", "fp16");
  await untilRows(page, 1, "beta-failed");
  await page.fill("#filter", "");
  say("name and tags shown and filtered");

  await page.fill("#filter", "beta");
  await untilRows(page, 1);
  // a run id is shown, so it matches too; the folder key "runs/..." is not: nothing hidden matches
  await page.fill("#filter", "preemption");
  await untilFolders(page, ["alpha-resumed", "alpha-resumed"]); // the directory's notes, shown by both its runs
  await page.fill("#filter", "");
  say("filter matches what is shown");

  await page.fill("#filter", "wide-net"); // delta's model name: not shown yet, so nothing matches
  await untilRows(page, 0);
  await page.locator("#config-picker summary").click();
  await page.locator('#config-columns input[value="model.name"]').check();
  await page.waitForFunction(
    () =>
      document.querySelectorAll("#runs tbody tr").length === 1 &&
      document.querySelector('#runs tbody td[data-column="config:model.name"]')?.textContent === "wide-net",
    null,
    WAIT,
  );
  await page.fill("#filter", "");
  await page.waitForFunction(
    () => document.querySelectorAll('#runs tbody td[data-column="config:model.name"]').length === 5,
    null,
    WAIT,
  );
  say("config column");
  await shot(page, "dashboard-page-runs.png");
}

async function resumedRun(page: Page): Promise<void> {
  await open(page, runHash("alpha-resumed"));
  await page.waitForFunction(
    (loss) =>
      document.querySelector("#run-status")?.textContent === "succeeded" &&
      Number(document.querySelector<HTMLElement>(loss)?.dataset["points"] || 0) >= 20,
    LOSS,
    WAIT,
  );
  const resumed = {
    chain: await page.locator("#run-chain").textContent(),
    points: await datasetNumber(page, LOSS, "points"),
    markers: ((await page.locator(LOSS).getAttribute("data-markers")) ?? "").split(" "),
  };
  if (!resumed.markers.includes("restart")) throw new Error(`no resume marker: ${resumed.markers}`);
  say("resumed run is one curve", resumed);
  await shot(page, "dashboard-page-resumed.png");
}

async function failedRun(page: Page): Promise<void> {
  await open(page, runHash("beta-failed"));
  await page.waitForFunction(
    () =>
      document.querySelector("#run-status")?.textContent === "failed" &&
      document.querySelector<HTMLElement>("#run-error")?.hidden === false,
    null,
    WAIT,
  );
  const failed = {
    run: (await page.locator("#run-error").textContent()) ?? "",
    trial: (await page.locator("#trials tbody").textContent()) ?? "",
    title: (await page.locator("#run-title").textContent()) ?? "",
  };
  if (
    !failed.run.includes("RuntimeError: CUDA out of memory") ||
    !failed.trial.includes("ValueError: trial diverged at step 3")
  )
    throw new Error(JSON.stringify(failed));
  say("failed run and trial show their errors", { title: failed.title });
  await shot(page, "dashboard-page-failed.png");
}

async function missingRun(page: Page): Promise<void> {
  await open(page, runHash(MISSING));
  await page.waitForFunction(
    (missing) => (document.querySelector("#progress-text")?.textContent ?? "").includes(`no run ${missing}`),
    MISSING,
    WAIT,
  );
  const left = await page.evaluate(() => ({
    badge: document.querySelector("#run-status")?.textContent,
    bar: document.querySelector<HTMLElement>("#progress-bar")?.style.width,
    error: document.querySelector<HTMLElement>("#run-error")?.hidden,
    charts: document.querySelectorAll("#charts [data-chart]").length,
    trials: document.querySelectorAll("#trials tbody tr").length,
  }));
  if (left.badge !== "" || left.bar !== "0%" || !left.error || left.charts !== 0 || left.trials !== 0)
    throw new Error(`left over: ${JSON.stringify(left)}`);
  say("missing run leaves nothing of the previous one");
}

async function staleRun(page: Page): Promise<void> {
  await open(page, runHash("gamma-stale"));
  await page.waitForFunction(
    () =>
      document.querySelector("#run-status")?.textContent === "stale" &&
      (document.querySelector("#phases")?.textContent ?? "").includes("train: unfinished"),
    null,
    WAIT,
  );
  const before = (await page.locator("#progress-text").textContent()) ?? "";
  await page.waitForTimeout(2500); // the duration of a stale run must not grow: nothing to wait for but time
  const after = await page.locator("#progress-text").textContent();
  if (before !== after || !before.includes("shown as ended at its last line"))
    throw new Error(`stale: ${before} / ${after}`);
  say("stale run ends at its last line");
}

async function liveCompare(page: Page): Promise<void> {
  await open(page, `#/compare?run=delta-live&run=beta-failed&run=${MISSING}`);
  const morePoints = (points: number) =>
    page.waitForFunction(
      ([chart, points]) => Number(document.querySelector<HTMLElement>(chart)?.dataset["points"] || 0) > points,
      [COMPARE_LOSS, points] as const,
      WAIT,
    );
  await morePoints(3);
  await morePoints(await datasetNumber(page, COMPARE_LOSS, "points"));
  await page.waitForFunction(
    (missing) => (document.querySelector("#compare-problems")?.textContent ?? "").includes(missing),
    MISSING,
    WAIT,
  );
  const config = await page.evaluate(() =>
    [...document.querySelectorAll("#compare-config tr")].map((tr) => [...tr.children].map((cell) => cell.textContent)),
  );
  if (
    !config.some((row) => row[0] === "lr" && row[1] === "0.05" && row[2] === "0.3") ||
    config.some((row) => row[0] === "model.width" && row[1] === row[2])
  )
    throw new Error(`config differences: ${JSON.stringify(config)}`);
  const options = await page
    .locator("#compare-metric option")
    .evaluateAll((found) => found.map((option) => (option as HTMLOptionElement).value));
  if (!options.includes("loss")) throw new Error(`charts to compare: ${options}`);
  await shot(page, "dashboard-page-compare.png");
  say("compare is live, any chart, config differences, unreadable run", { options });
}

await drive(
  async (page) => {
    await page.goto(url);
    await page.waitForSelector("#runs tbody tr", { timeout: 30_000 });
    if (mode === "single") {
      await singleRunDirectory(page);
      return;
    }
    if (mode === "twice") {
      await twoRunsOfADirectory(page);
      return;
    }
    await runsList(page);
    await resumedRun(page);
    await failedRun(page);
    await missingRun(page);
    await staleRun(page);
    await liveCompare(page);
  },
  { allowStatus: (response) => response.status() === 404 && response.url().includes(`/runs/${MISSING}/`) },
);
