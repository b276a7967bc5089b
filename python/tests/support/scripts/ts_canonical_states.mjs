// For each case given as JSON on stdin ({path, now, stale_after_s, resume_at, max_diagnostics}), print the
// TypeScript reader's canonical state with diagnostic messages blanked, one per line. With
// `resume_at` (a byte offset just after a newline), the bytes before it are read by one
// reader, whose saved state (through JSON) resumes a second reader that reads the rest.
import { readFileSync } from "node:fs";
import { canonicalStringify, StreamReader } from "../../../../typescript/dist/index.js";

const cases = JSON.parse(readFileSync(0, "utf8"));
for (const { path, now, stale_after_s: staleAfterS, resume_at: resumeAt, max_diagnostics: maxDiagnostics } of cases) {
  const bytes = new Uint8Array(readFileSync(path));
  const limits = maxDiagnostics == null ? {} : { maxDiagnostics };
  let reader = new StreamReader(limits);
  if (resumeAt != null) {
    reader.feed(bytes.subarray(0, resumeAt));
    reader = new StreamReader({ ...limits, resume: JSON.parse(JSON.stringify(reader.toState())) });
    reader.feed(bytes.subarray(resumeAt));
  } else {
    reader.feed(bytes);
  }
  const options = {};
  if (now != null) options.now = now;
  if (staleAfterS != null) options.staleAfterS = staleAfterS;
  const state = reader.toState(options);
  for (const diagnostic of state.diagnostics) diagnostic.message = "";
  process.stdout.write(canonicalStringify(state) + "\n");
}
