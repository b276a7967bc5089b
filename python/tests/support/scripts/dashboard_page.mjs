// Drives the `trainwire serve` page over the runs test_dashboard_page.py writes:
// `node dashboard_page.mjs all|single URL SCREENSHOT_DIR`. Prints one JSON line per check it
// passed; exits non-zero with the reason on the first failure.
import path from "node:path";
import { drive, say } from "../../../../typescript/dist/test/browser/chromium-page.js";

const [mode, url, screenshots] = process.argv.slice(2);
const MISSING = "nope-never-written";
await drive(async (page) => {
  const wait = (predicate, argument) => page.waitForFunction(predicate, argument, { timeout: 30_000 });
  const shot = (name) => page.screenshot({ path: path.join(screenshots, name), fullPage: true });
  const cells = (column) => page.evaluate((column) => [...document.querySelectorAll(`#runs tbody td[data-column="${column}"]`)].map((td) => td.textContent), column);
  const open = async (key) => {
    await page.evaluate((key) => { location.hash = `#/run/${encodeURIComponent(key)}`; }, key);
  };
  await page.goto(url);
  await page.waitForSelector("#runs tbody tr", { timeout: 30_000 });
  if (mode === "single") {
    const [folder] = await cells("key");
    await page.locator("#runs tbody tr").first().click();
    await wait(() => Number(document.querySelector("#progress-text")?.dataset.step || 0) >= 20);
    say("single run directory", { folder, step: await page.evaluate(() => Number(document.querySelector("#progress-text").dataset.step)) });
  } else {
    await wait(() => document.querySelectorAll("#runs tbody tr").length === 4);
    const folders = await cells("key");
    const notes = await cells("notes");
    if (folders.slice().sort().join() !== "alpha-resumed,beta-failed,delta-live,gamma-stale") throw new Error(`folders: ${folders}`);
    if (!notes.includes("resumed after preemption")) throw new Error(`notes: ${notes}`);
    say("folders and notes");

    const [names, tags] = [await cells("name"), await cells("tags")];
    if (!names.includes("beta sweep") || !tags.includes("baseline, fp16")) throw new Error(`names ${names}, tags ${tags}`);
    await page.fill("#filter", "fp16");
    await wait(() => document.querySelectorAll("#runs tbody tr").length === 1 && document.querySelector('#runs tbody td[data-column="key"]').textContent === "beta-failed");
    await page.fill("#filter", "");
    say("name and tags shown and filtered");

    await page.fill("#filter", "beta");
    await wait(() => document.querySelectorAll("#runs tbody tr").length === 1);
    // a run id is shown, so it matches too; the folder key "runs/..." is not: nothing hidden matches
    await page.fill("#filter", "preemption");
    await wait(() => document.querySelectorAll("#runs tbody tr").length === 1 && document.querySelector('#runs tbody td[data-column="key"]').textContent === "alpha-resumed");
    await page.fill("#filter", "");
    say("filter matches what is shown");

    await page.fill("#filter", "wide-net"); // delta's model name: not shown yet, so nothing matches
    await wait(() => document.querySelectorAll("#runs tbody tr").length === 0);
    await page.locator("#config-picker summary").click();
    await page.locator('#config-columns input[value="model.name"]').check();
    await wait(() => document.querySelectorAll("#runs tbody tr").length === 1 && document.querySelector('#runs tbody td[data-column="config:model.name"]').textContent === "wide-net");
    await page.fill("#filter", "");
    await wait(() => document.querySelectorAll('#runs tbody td[data-column="config:model.name"]').length === 4);
    say("config column");
    await shot("dashboard-page-runs.png");

    await open("alpha-resumed");
    await wait(() => document.querySelector("#run-status")?.textContent === "succeeded" && Number(document.querySelector('[data-chart="loss"]')?.dataset.points || 0) >= 20);
    const resumed = await page.evaluate(() => ({
      chain: document.querySelector("#run-chain").textContent,
      points: Number(document.querySelector('[data-chart="loss"]').dataset.points),
      markers: document.querySelector('[data-chart="loss"]').dataset.markers.split(" "),
    }));
    if (!resumed.markers.includes("restart")) throw new Error(`no resume marker: ${resumed.markers}`);
    say("resumed run is one curve", resumed);
    await shot("dashboard-page-resumed.png");

    await open("beta-failed");
    await wait(() => document.querySelector("#run-status")?.textContent === "failed" && !document.querySelector("#run-error").hidden);
    const failed = await page.evaluate(() => ({ run: document.querySelector("#run-error").textContent, trial: document.querySelector("#trials tbody").textContent, title: document.querySelector("#run-title").textContent }));
    if (!failed.run.includes("RuntimeError: CUDA out of memory") || !failed.trial.includes("ValueError: trial diverged at step 3")) throw new Error(JSON.stringify(failed));
    say("failed run and trial show their errors", { title: failed.title });
    await shot("dashboard-page-failed.png");

    await open(MISSING);
    await wait((missing) => document.querySelector("#progress-text").textContent.includes(`no run ${missing}`), MISSING);
    const left = await page.evaluate(() => ({
      badge: document.querySelector("#run-status").textContent,
      bar: document.querySelector("#progress-bar").style.width,
      error: document.querySelector("#run-error").hidden,
      charts: document.querySelectorAll("#charts [data-chart]").length,
      trials: document.querySelectorAll("#trials tbody tr").length,
    }));
    if (left.badge !== "" || left.bar !== "0%" || !left.error || left.charts !== 0 || left.trials !== 0) throw new Error(`left over: ${JSON.stringify(left)}`);
    say("missing run leaves nothing of the previous one");

    await open("gamma-stale");
    await wait(() => document.querySelector("#run-status")?.textContent === "stale" && document.querySelector("#phases").textContent.includes("train: unfinished"));
    const before = await page.locator("#progress-text").textContent();
    await page.waitForTimeout(2500); // the duration of a stale run must not grow: nothing to wait for but time
    const after = await page.locator("#progress-text").textContent();
    if (before !== after || !before.includes("shown as ended at its last line")) throw new Error(`stale: ${before} / ${after}`);
    say("stale run ends at its last line");

    await page.evaluate((missing) => { location.hash = `#/compare?run=delta-live&run=beta-failed&run=${missing}`; }, MISSING);
    await wait(() => Number(document.querySelector('#compare-chart [data-chart="loss"]')?.dataset.points || 0) > 3);
    const firstPoints = await page.evaluate(() => Number(document.querySelector('#compare-chart [data-chart="loss"]').dataset.points));
    await wait((points) => Number(document.querySelector('#compare-chart [data-chart="loss"]')?.dataset.points || 0) > points, firstPoints);
    await wait((missing) => document.querySelector("#compare-problems").textContent.includes(missing), MISSING);
    const config = await page.evaluate(() => [...document.querySelectorAll("#compare-config tr")].map((tr) => [...tr.children].map((cell) => cell.textContent)));
    if (!config.some((row) => row[0] === "lr" && row[1] === "0.05" && row[2] === "0.3") || config.some((row) => row[0] === "model.width" && row[1] === row[2]))
      throw new Error(`config differences: ${JSON.stringify(config)}`);
    const options = await page.evaluate(() => [...document.querySelector("#compare-metric").options].map((option) => option.value));
    if (!options.includes("loss")) throw new Error(`charts to compare: ${options}`);
    await shot("dashboard-page-compare.png");
    say("compare is live, any chart, config differences, unreadable run", { options });
  }
  // the one request allowed to fail: the run that does not exist
}, { allowStatus: (response) => response.status() === 404 && response.url().includes(`/runs/${MISSING}/`) });
