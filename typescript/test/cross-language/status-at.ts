// For each case given as JSON on stdin ({status, last_ts, heartbeat_interval_s, now, stale_after_s}),
// print the TypeScript `statusAt` answer as a JSON string, one per line.
import { toTimestampUs } from "../../src/clock.js";
import { statusAt } from "../../src/liveness.js";
import { answer, requests } from "./requests.js";

interface StatusCase {
  status: string;
  last_ts: string | null;
  heartbeat_interval_s: number | null;
  now: string | null;
  stale_after_s: number | null;
}

for (const { status, last_ts, heartbeat_interval_s, now, stale_after_s } of requests<StatusCase>()) {
  const nowMicros = now == null ? undefined : toTimestampUs(now);
  answer(statusAt(status, last_ts, heartbeat_interval_s, nowMicros, stale_after_s ?? undefined));
}
