// Opens two runs of the `trainwire serve` page written by test_dashboard_opening.py: one with a
// journal (opened from its opening) and the same stream without one (read from byte 0):
// `node dashboard-opening.js URL STEPS CHART...` (the last step and every chart each shows).
// Prints, per run, what the run view shows and the Range of each request for its stream; exits
// non-zero with the reason on the first failure.
import { drive, say, scriptArguments } from "./chromium-page.js";

const [url = "", steps = "", ...charts] = scriptArguments(2, "node dashboard-opening.js URL STEPS CHART...");
await drive(async (page) => {
  const ranges = new Map<string, string[]>();
  // the decoding worker's requests are the page's too
  page.on("request", (request) => {
    const match = /\/runs\/([^/]+)\/progress\.jsonl$/.exec(new URL(request.url()).pathname);
    const key = match?.[1];
    if (key !== undefined) ranges.set(key, [...(ranges.get(key) ?? []), request.headers()["range"] ?? "none"]);
  });
  for (const key of ["opened", "from-zero"]) {
    await page.goto(url); // a fresh page each: nothing of the other run's view is left to match
    await page.waitForSelector("#runs tbody tr", { timeout: 30_000 });
    await page.evaluate((key) => {
      location.hash = `#/run/${encodeURIComponent(key)}`;
    }, key);
    await page.waitForFunction(
      ([key, steps, charts]) =>
        (document.querySelector("#run-title")?.textContent ?? "").includes(`(${key})`) &&
        document.querySelector("#run-status")?.textContent === "succeeded" &&
        document.querySelector<HTMLElement>("#progress-text")?.dataset["step"] === steps &&
        [...document.querySelectorAll<HTMLElement>("#charts [data-chart]")]
          .map((chart) => chart.dataset["chart"])
          .sort()
          .join() === [...charts].sort().join() &&
        document.querySelector("#run-chain")?.textContent !== "" &&
        document.querySelectorAll('[data-chart="loss"][data-markers*="finished"]').length === 1,
      [key, steps, charts] as const,
      { timeout: 30_000 },
    );
    const view = await page.evaluate(() => ({
      chain: document.querySelector("#run-chain")?.textContent,
      phases: document.querySelector("#phases")?.textContent,
      config: document.querySelector("#config")?.textContent,
      charts: [...document.querySelectorAll<HTMLElement>("#charts [data-chart]")].map((chart) => ({
        title: chart.dataset["chart"],
        series: chart.dataset["series"],
        markers: chart.dataset["markers"],
        points: Number(chart.dataset["points"]),
      })),
      bytes: Number(document.querySelector<HTMLElement>("#run-view")?.dataset["bytes"]),
    }));
    say(key, { view, ranges: ranges.get(key) ?? [] });
  }
});
