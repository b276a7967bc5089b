// For each case given as JSON on stdin ({summary, now, stale_after_s, liveness}), print the
// TypeScript `verdictOf` answer and its `verdictText`, canonical JSON, one per line.
import { toTimestampUs } from "../../src/clock.js";
import type { RunVerdict } from "../../src/generated/types.js";
import { type VerdictInput, verdictOf, verdictText } from "../../src/verdict.js";
import { canonicalAnswer, requests } from "./requests.js";

interface VerdictCase {
  summary: VerdictInput;
  now: string | null;
  stale_after_s: number | null;
  liveness: RunVerdict["liveness"];
}

for (const { summary, now, stale_after_s, liveness } of requests<VerdictCase>()) {
  const verdict = verdictOf(
    summary,
    now == null ? undefined : toTimestampUs(now),
    stale_after_s ?? undefined,
    liveness,
  );
  canonicalAnswer({ verdict, text: verdictText(verdict, summary.total_steps) });
}
