// For each case given as JSON on stdin ({status, last_ts, heartbeat_interval_s, now, stale_after_s}),
// print the TypeScript `statusAt` answer as a JSON string, one per line.
import { readFileSync } from "node:fs";
import { toTimestampUs } from "../../../../typescript/dist/clock.js";
import { statusAt } from "../../../../typescript/dist/liveness.js";

const cases = JSON.parse(readFileSync(0, "utf8"));
for (const { status, last_ts: lastTs, heartbeat_interval_s: heartbeat, now, stale_after_s: staleAfterS } of cases) {
  const nowMicros = now == null ? undefined : toTimestampUs(now);
  process.stdout.write(JSON.stringify(statusAt(status, lastTs, heartbeat, nowMicros, staleAfterS ?? undefined)) + "\n");
}
