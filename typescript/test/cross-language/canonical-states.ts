// For each case given as JSON on stdin ({path, now, stale_after_s, resume_at, max_diagnostics}), print the
// TypeScript reader's canonical state with diagnostic messages blanked, one per line. With
// `resume_at` (a byte offset just after a newline), the bytes before it are read by one
// reader, whose saved state (through JSON) resumes a second reader that reads the rest.
import type { StateOptions } from "../../src/fold.js";
import { StreamReader } from "../../src/reader.js";
import type { ReaderState } from "../../src/types.js";
import { bytesOf, canonicalAnswer, requests } from "./requests.js";

interface StateCase {
  path: string;
  now?: string | null;
  stale_after_s?: number | null;
  resume_at?: number | null;
  max_diagnostics?: number | null;
}

for (const { path, now, stale_after_s, resume_at, max_diagnostics } of requests<StateCase>()) {
  const bytes = bytesOf(path);
  const limits = max_diagnostics == null ? {} : { maxDiagnostics: max_diagnostics };
  let reader = new StreamReader(limits);
  if (resume_at != null) {
    reader.feed(bytes.subarray(0, resume_at));
    const saved = JSON.parse(JSON.stringify(reader.toState())) as ReaderState;
    reader = new StreamReader({ ...limits, resume: saved });
    reader.feed(bytes.subarray(resume_at));
  } else {
    reader.feed(bytes);
  }
  const options: StateOptions = {};
  if (now != null) options.now = now;
  if (stale_after_s != null) options.staleAfterS = stale_after_s;
  const state = reader.toState(options);
  for (const diagnostic of state.diagnostics) diagnostic.message = "";
  canonicalAnswer(state);
}
