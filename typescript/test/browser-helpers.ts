// Shared by the browser tests: Debian's Chromium and page bundles of the built package.
import path from "node:path";
import { build, type Plugin } from "esbuild";
import { PACKAGE_DIR } from "./helpers.js";

export { CHROMIUM, CHROMIUM_ARGS } from "./browser/chromium.js";

/** Resolves the package's own entries to its build output, as an installed copy would. */
const selfReference: Plugin = {
  name: "trainwire-self-reference",
  setup(builder) {
    const entries: Record<string, string> = { trainwire: "index.js", "trainwire/browser": "browser.js" };
    builder.onResolve({ filter: /^trainwire(\/.*)?$/ }, ({ path: specifier }) => {
      const file = entries[specifier];
      return file === undefined
        ? { errors: [{ text: `${specifier} is not a browser entry` }] }
        : { path: path.join(PACKAGE_DIR, "dist", file) };
    });
  },
};

/** The script bundled for a browser, with `trainwire` imports resolved to the build output. */
export async function bundleForBrowser(script: string): Promise<string> {
  const result = await build({
    stdin: { contents: script, resolveDir: PACKAGE_DIR, loader: "js" },
    bundle: true,
    write: false,
    format: "esm",
    platform: "browser", // a Node built-in anywhere in the graph fails the build
    target: "es2022",
    plugins: [selfReference],
    logLevel: "silent",
  });
  return result.outputFiles[0]?.text ?? "";
}
