// The browser example in a real Chromium: esbuild bundle, a local server with Range support, fromFetch.
import assert from "node:assert/strict";
import { appendFile, readFile, stat, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { describe, it } from "node:test";
import { chromium } from "playwright-core";
import { bundleForBrowser, CHROMIUM, CHROMIUM_ARGS } from "./browser-helpers.js";
import { known, line, ndjson, tempDir } from "./helpers.js";

const PAGE = `<!doctype html><meta charset="utf-8"><title>trainwire</title>
<progress></progress> <span id="label">waiting for the run...</span>
<script type="module" src="/page.js"></script>`;

const PAGE_SCRIPT = `
import { showProgress } from "./examples/browser-progress.ts";
showProgress("/progress.jsonl", document.querySelector("progress"), document.querySelector("#label"), 50)
  .then((status) => { document.body.dataset.result = status; }, (error) => { document.body.dataset.result = "error: " + error; });
`;

function bundlePage(): Promise<string> {
  return bundleForBrowser(PAGE_SCRIPT);
}

/** Serves the page, its script and the stream file; answers `Range: bytes=N-` like a static file server. */
function serve(streamFile: string, script: string, ranges: string[]): Promise<Server> {
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    void (async () => {
      if (request.url === "/") return send(response, 200, { "Content-Type": "text/html" }, PAGE);
      if (request.url === "/page.js") return send(response, 200, { "Content-Type": "text/javascript" }, script);
      if (request.url !== "/progress.jsonl") return send(response, 404, {}, "");
      const bytes = await readFile(streamFile).catch(() => undefined);
      if (bytes === undefined) return send(response, 404, {}, "");
      const range = request.headers.range;
      ranges.push(range ?? "");
      const match = range === undefined ? null : /^bytes=(\d+)-$/.exec(range);
      if (match === null) return send(response, 200, { "Content-Type": "application/x-ndjson" }, bytes);
      const start = Number(match[1]);
      if (start >= bytes.length) return send(response, 416, { "Content-Range": `bytes */${bytes.length}` }, "");
      return send(
        response,
        206,
        { "Content-Range": `bytes ${start}-${bytes.length - 1}/${bytes.length}` },
        bytes.subarray(start),
      );
    })();
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

function send(
  response: ServerResponse,
  status: number,
  headers: Record<string, string>,
  body: string | Uint8Array,
): void {
  response.writeHead(status, { "Cache-Control": "no-store", ...headers });
  response.end(body);
}

describe("in a browser", () => {
  it("follows a growing stream with fromFetch and shows the run's progress (docs example)", async () => {
    await stat(CHROMIUM).catch(() => assert.fail(`${CHROMIUM} is missing: apt-get install chromium (make setup does)`));
    const { dir, remove } = await tempDir();
    const streamFile = path.join(dir, "progress.jsonl");
    const ranges: string[] = [];
    const server = await serve(streamFile, await bundlePage(), ranges);
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    try {
      const page = await browser.newPage();
      const { port } = server.address() as AddressInfo;
      await page.goto(`http://127.0.0.1:${port}/`);
      const label = (): Promise<string> => page.locator("#label").innerText();

      await writeFile(
        streamFile,
        ndjson(
          known("run.started", 1, { total_steps: 4 }),
          known("train.step", 2, { step: 1, total_steps: 4, progress: 0.25, loss: 2 }),
        ),
      );
      await page.waitForFunction(() => document.querySelector("#label")?.textContent?.startsWith("step 1 of 4"));
      assert.equal(await page.locator("progress").evaluate((bar) => (bar as HTMLProgressElement).value), 0.25);

      await appendFile(streamFile, ndjson(known("train.step", 3, { step: 4, total_steps: 4, progress: 1, loss: 0.5 })));
      await page.waitForFunction(() => document.querySelector("#label")?.textContent?.startsWith("step 4 of 4"));
      assert.equal(await label(), "step 4 of 4, loss 0.500");

      const finished = JSON.stringify(
        line("run.finished", 4, {
          status: "succeeded",
          exit_code: 0,
          error: null,
          reason: null,
          step: 4,
          checkpoint: null,
          duration_s: 1,
          metrics: {},
          artifacts: {},
        }),
      );
      await appendFile(streamFile, finished.slice(0, 40)); // a torn line first: it must wait for the rest
      await appendFile(streamFile, `${finished.slice(40)}\n`);
      await page.waitForFunction(() => document.body.dataset["result"] !== undefined);
      assert.equal(await page.evaluate(() => document.body.dataset["result"]), "succeeded");
      assert.equal(await label(), "finished: succeeded");
      assert.equal(await page.locator("progress").evaluate((bar) => (bar as HTMLProgressElement).value), 1);
      // Each poll asked only for the bytes after what it had: the offsets grew past 0.
      // (Closed ranges, bytes=0-N, are the check of the first bytes when the file grows.)
      const offsets = ranges
        .filter((range) => !/^bytes=0-\d+$/.test(range))
        .map((range) => Number(/bytes=(\d+)-/.exec(range)?.[1]));
      assert.ok(
        offsets.every((offset) => Number.isInteger(offset)),
        ranges.join(" "),
      );
      assert.ok(new Set(offsets).size >= 3, ranges.join(" "));
      assert.deepEqual(
        [...offsets].sort((a, b) => a - b),
        offsets,
      );
    } finally {
      await browser.close();
      await new Promise((resolve) => server.close(resolve));
      await remove();
    }
  });
});
