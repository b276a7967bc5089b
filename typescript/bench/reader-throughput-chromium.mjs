// The same comparison as reader-throughput.mjs inside a Chromium page: the bundled reader and
// the stream bytes are served from 127.0.0.1, and the page times both with performance.now().
// Usage: node bench/reader-throughput-chromium.mjs STREAM ROUNDS
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { build } from "esbuild";
import { chromium } from "playwright-core";
import { CHROMIUM, CHROMIUM_ARGS } from "../dist/test/browser/chromium.js";
import { report } from "./_measure.mjs";

const PAGE = `<!doctype html><meta charset="utf-8"><title>reader throughput</title><script type="module" src="/page.js"></script>`;
const [streamPath, rounds] = process.argv.slice(2);
const packageDir = path.resolve(import.meta.dirname, "..");

/** The page module and the reader it imports, as one script (what a site would ship). */
async function bundlePage() {
  const { outputFiles } = await build({
    entryPoints: [path.join(import.meta.dirname, "_chromium-page.mjs")],
    alias: { trainwire: path.join(packageDir, "dist", "index.js") },
    platform: "browser", // a Node built-in in the reader would fail the build
    target: "es2022",
    format: "esm",
    bundle: true,
    write: false,
  });
  return outputFiles[0].text;
}

function serve(routes) {
  const server = createServer((request, response) => {
    const route = routes[request.url ?? ""];
    response.writeHead(route === undefined ? 404 : 200, {
      "Cache-Control": "no-store",
      "Content-Type": route?.type ?? "text/plain",
    });
    response.end(route?.body ?? "");
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

const server = await serve({
  "/": { type: "text/html", body: PAGE },
  "/page.js": { type: "text/javascript", body: await bundlePage() },
  "/stream": { type: "application/x-ndjson", body: readFileSync(streamPath) },
});
const profile = mkdtempSync(path.join(tmpdir(), "trainwire-bench-chromium-"));
const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, args: CHROMIUM_ARGS });
try {
  const page = context.pages()[0] ?? (await context.newPage());
  await page.goto(`http://127.0.0.1:${server.address().port}/`);
  await page.waitForFunction(() => typeof globalThis.measure === "function");
  const result = await page.evaluate((count) => globalThis.measure(count), Number(rounds));
  report({ ...result, engine: `Chromium ${context.browser()?.version() ?? ""}, timed in the page` });
} finally {
  await context.close();
  server.close();
  rmSync(profile, { recursive: true, force: true });
}
