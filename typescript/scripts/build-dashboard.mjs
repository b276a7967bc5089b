// Builds the `trainwire serve` page and the `trainwire plot` charts into the Python package
// (python/src/trainwire/serve/static/): bundled scripts (the package's reader + uPlot) and one
// stylesheet; no CDN, no fetches at run time.
import { copyFile, mkdir, readFile, writeFile } from "node:fs/promises";
import { build } from "esbuild";

const here = new URL("../dashboard/", import.meta.url);
const out = new URL("../../python/src/trainwire/serve/static/", import.meta.url);
await mkdir(out, { recursive: true });
// dashboard.js: the page of `trainwire serve`; worker.js: its decoding worker (a stream is
// read off the page's thread); plot.js: the charts `trainwire plot` inlines
for (const [entry, file] of [
  ["main.ts", "dashboard.js"],
  ["worker.ts", "worker.js"],
  ["plot.ts", "plot.js"],
]) {
  await build({
    entryPoints: [new URL(entry, here).pathname],
    bundle: true,
    format: "iife",
    target: "es2022",
    minify: true,
    legalComments: "eof",
    outfile: new URL(file, out).pathname,
    logLevel: "warning",
  });
}
const uplotCss = await readFile(new URL("../node_modules/uplot/dist/uPlot.min.css", import.meta.url), "utf8");
const ownCss = await readFile(new URL("dashboard.css", here), "utf8");
await writeFile(new URL("dashboard.css", out), `${uplotCss}\n${ownCss}`);
for (const file of ["index.html", "favicon.svg"]) await copyFile(new URL(file, here), new URL(file, out));
