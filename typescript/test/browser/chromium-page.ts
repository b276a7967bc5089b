// Headless Chromium (playwright-core, the system browser) on a `trainwire serve` page, failing
// on any page error, Content-Security-Policy violation or failed request of the page.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type BrowserContext, chromium, type Page, type Response } from "playwright-core";
import { CHROMIUM, CHROMIUM_ARGS } from "./chromium.js";

/** One line of the script's report: the check it passed, with what it saw. */
export function say(check: string, detail: Record<string, unknown> = {}): void {
  console.log(JSON.stringify({ check, ...detail }));
}

/** A run without an opening (no journal, or one its stream no longer matches): the page reads the stream from byte 0. */
function isOpeningFallback(response: Response): boolean {
  return response.status() === 404 && new URL(response.url()).pathname.endsWith("/opening");
}

export interface BrowserOptions {
  /** A failed response the script expects (a refused stop, say): not counted as an error. */
  allowStatus?: (response: Response) => boolean;
}

export interface WatchedBrowser {
  context: BrowserContext;
  page: Page;
  /** The page's errors so far. */
  errors: string[];
}

/** A browser with one page watched for errors: `errors` collects them; close `context` at the end. */
export async function openBrowser({ allowStatus = () => false }: BrowserOptions = {}): Promise<WatchedBrowser> {
  const context = await chromium.launchPersistentContext(mkdtempSync(path.join(tmpdir(), "trainwire-chromium-")), {
    executablePath: CHROMIUM,
    headless: true, // playwright passes its own `--headless`
    viewport: { width: 1280, height: 900 },
    args: CHROMIUM_ARGS.filter((arg) => arg !== "--headless"),
  });
  const errors: string[] = [];
  const page = context.pages()[0] ?? (await context.newPage());
  page.on("pageerror", (error) => errors.push(String(error)));
  page.on("console", (message) => {
    if (/Content Security Policy/i.test(message.text())) errors.push(message.text());
  });
  page.on("response", (response) => {
    if (response.status() >= 400 && !isOpeningFallback(response) && !allowStatus(response))
      errors.push(`${response.status()} for ${response.url()}`);
  });
  await page.addInitScript(() =>
    document.addEventListener("securitypolicyviolation", (event) =>
      console.error(`Content Security Policy violation: ${event.violatedDirective} ${event.blockedURI}`),
    ),
  );
  return { context, page, errors };
}

/**
 * Runs `steps(page)` in a watched browser; any error of the steps or of the page makes the
 * process exit non-zero with the reason on stderr. The browser is closed in every case.
 */
export async function drive(steps: (page: Page) => Promise<void>, options: BrowserOptions = {}): Promise<void> {
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

/** The `data-` attribute `name` of the page's element `selector`, as a number (0 for none). */
export function datasetNumber(page: Page, selector: string, name: string): Promise<number> {
  return page.evaluate(
    ([selector, name]) => Number(document.querySelector<HTMLElement>(selector)?.dataset[name] || 0),
    [selector, name] as const,
  );
}

/** Waits until the chart `selector` shows a marker of `kind` (its `data-markers`). */
export async function waitForMarker(page: Page, selector: string, kind: string, timeout: number): Promise<void> {
  await page.waitForFunction(
    ([selector, kind]) =>
      (document.querySelector<HTMLElement>(selector)?.dataset["markers"] ?? "").split(" ").includes(kind),
    [selector, kind] as const,
    { timeout },
  );
}

/** The command line's arguments after the script, `count` of them, each required. */
export function scriptArguments(count: number, usage: string): string[] {
  const given = process.argv.slice(2);
  if (given.length < count || given.slice(0, count).some((value) => value === "")) {
    console.error(`usage: ${usage}`);
    process.exit(2);
  }
  return given;
}
