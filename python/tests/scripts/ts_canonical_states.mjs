// For each case given as JSON on stdin ({path, now, stale_after_s}), print the TypeScript
// reader's canonical state with diagnostic messages blanked, one per line.
import { readFileSync } from "node:fs";
import { canonicalStringify, StreamReader } from "../../../typescript/dist/index.js";

const cases = JSON.parse(readFileSync(0, "utf8"));
for (const { path, now, stale_after_s: staleAfterS } of cases) {
  const reader = new StreamReader();
  reader.feed(new Uint8Array(readFileSync(path)));
  const options = {};
  if (now != null) options.now = now;
  if (staleAfterS != null) options.staleAfterS = staleAfterS;
  const state = reader.toState(options);
  for (const diagnostic of state.diagnostics) diagnostic.message = "";
  process.stdout.write(canonicalStringify(state) + "\n");
}
