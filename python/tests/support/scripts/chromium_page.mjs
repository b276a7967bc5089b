// Headless Chromium (playwright-core, the system browser) on a `trainwire serve` page, failing
// on any page error, Content-Security-Policy violation or failed request of the page.
import { mkdtempSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";

const require = createRequire(new URL("../../../../typescript/package.json", import.meta.url));
const { chromium } = require("playwright-core");

export const say = (check, detail = {}) => console.log(JSON.stringify({ check, ...detail }));

/** A run without an opening (no journal, or one its stream no longer matches): the page reads the stream from byte 0. */
const isOpeningFallback = (response) => response.status() === 404 && new URL(response.url()).pathname.endsWith("/opening");

/** A browser with one page watched for errors: `errors` collects them; close `context` at the end. */
export async function openBrowser({ allowStatus = () => false } = {}) {
  const context = await chromium.launchPersistentContext(mkdtempSync(path.join(tmpdir(), "trainwire-chromium-")), {
    executablePath: "/usr/bin/chromium",
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const errors = [];
  const page = context.pages()[0] ?? (await context.newPage());
  page.on("pageerror", (error) => errors.push(String(error)));
  page.on("console", (message) => { if (/Content Security Policy/i.test(message.text())) errors.push(message.text()); });
  page.on("response", (response) => { if (response.status() >= 400 && !isOpeningFallback(response) && !allowStatus(response)) errors.push(`${response.status()} for ${response.url()}`); });
  await page.addInitScript(() => document.addEventListener("securitypolicyviolation", (event) => console.error(`Content Security Policy violation: ${event.violatedDirective} ${event.blockedURI}`)));
  return { context, page, errors };
}

/**
 * Runs `steps(page)` in a watched browser; any error of the steps or of the page makes the
 * process exit non-zero with the reason on stderr. The browser is closed in every case.
 */
export async function drive(steps, options = {}) {
  const { context, page, errors } = await openBrowser(options);
  try {
    await steps(page);
    if (errors.length) throw new Error(`page errors: ${errors.join("; ")}`);
  } catch (error) {
    console.error(String(error), errors.join("; "));
    process.exitCode = 1;
  } finally {
    await context.close();
  }
}
