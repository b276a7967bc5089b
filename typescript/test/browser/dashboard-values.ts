// Drives the `trainwire serve` page over the hostile runs test_dashboard_values.py writes:
// `node dashboard-values.js URL`. The runs list also passes through a proxy (a route of the
// browser) that adds rows of every wrong shape. Prints one JSON line per check it passed;
// exits non-zero with the reason on the first failure.
import { readFileSync } from "node:fs";
import { drive, say, scriptArguments } from "./chromium-page.js";

const [url = ""] = scriptArguments(1, "node dashboard-values.js URL");
/** What a broken server or proxy may add to the runs list: no row of it may cost the others. */
const INJECTED = [
  null,
  7,
  "row",
  [],
  { key: 5 },
  { key: "" },
  {
    key: "injected",
    run_id: ["r"],
    status: ["running"],
    step: "5",
    total_steps: {},
    git_sha: { sha: 1 },
    started_at: 3,
    config: 7,
    notes: 5,
  },
  { key: "injected", status: "a second row of the same run" }, // the same key and run id: dropped
];
const FORMULAS = ["=cmd|' /C calc'!A0", ";=cmd|' /C calc'!A0"];

await drive(async (page) => {
  const wait = (predicate: () => boolean) => page.waitForFunction(predicate, null, { timeout: 30_000 });
  const cells = (column: string) =>
    page.evaluate(
      (column) =>
        Object.fromEntries(
          [...document.querySelectorAll<HTMLTableRowElement>("#runs tbody tr")].map((tr) => [
            tr.dataset["key"],
            tr.querySelector(`td[data-column="${column}"]`)?.textContent,
          ]),
        ),
      column,
    );
  // the server filters: the rows of every wrong shape join its pages that no filter narrows
  await page.route("**/api/runs?*", async (route) => {
    const response = await route.fetch();
    const answer = (await response.json()) as { rows: unknown[] };
    const filtered = new URL(route.request().url()).searchParams.has("filter");
    await route.fulfill({ response, json: filtered ? answer : { ...answer, rows: [...answer.rows, ...INJECTED] } });
  });
  await page.goto(url);
  if (new URL(page.url()).searchParams.has("token"))
    throw new Error(`the token stays in the address bar: ${page.url()}`);
  await wait(() => document.querySelectorAll("#runs tbody tr").length >= 5);
  say("rows", {
    status: await cells("status"),
    git_sha: await cells("git_sha"),
    progress: await cells("progress"),
    note: await page.locator("#server-note").textContent(),
  });

  await page.locator("#config-picker summary").click();
  for (const name of ["constructor", "toString", "hasOwnProperty"])
    await page.locator(`#config-columns input[value="${name}"]`).check();
  await page.fill("#filter", "ctor-value");
  await wait(() => document.querySelectorAll("#runs tbody tr").length === 1);
  const filtered = Object.keys(await cells("key"));
  await page.fill("#filter", "");
  await wait(() => document.querySelectorAll("#runs tbody tr").length >= 5);
  say("config keys", {
    filtered,
    constructor: await cells("config:constructor"),
    toString: await cells("config:toString"),
    hasOwnProperty: await cells("config:hasOwnProperty"),
  });

  await page.reload();
  await wait(() => document.querySelectorAll("#runs tbody tr").length >= 5);
  say("reload", {
    url: page.url(),
    constructor: await cells("config:constructor"),
    note: await page.locator("#server-note").textContent(),
  });

  await page.evaluate(() => {
    location.hash = "#/run/line-breaks";
  });
  await wait(
    () =>
      document.querySelectorAll("#charts [data-chart]").length >= 5 &&
      document.querySelector("#run-status")?.textContent === "succeeded",
  );
  const charts = await page.evaluate(() =>
    Object.fromEntries(
      [...document.querySelectorAll<HTMLElement>("#charts [data-chart]")].map((chart) => [
        chart.dataset["chart"],
        Number(chart.dataset["points"]),
      ]),
    ),
  );
  say("line breaks", { charts, progress: await page.locator("#progress-text").textContent() });

  const csv: Record<string, string> = {};
  for (const title of FORMULAS) {
    const button = page.locator(`#charts [data-chart=${JSON.stringify(title)}] button.csv`); // no quote or backslash in the titles
    const [download] = await Promise.all([page.waitForEvent("download"), button.click()]);
    csv[title] = readFileSync(await download.path(), "utf8");
  }
  say("csv", { csv });
});
