// When a running run is `stale` (reader rule 4): one pure function, the same as Python's
// trainwire.contract.liveness.status_at for the same inputs.
import { toTimestampUs } from "./clock.js";

/** Without `staleAfterS`, a run is stale after this many heartbeat intervals of silence. */
export const HEARTBEATS_BEFORE_STALE = 3;

/**
 * `stale` when a `running` run's last line (`lastTs`) is older than the limit at `nowMicros`.
 * The limit is `staleAfterS`, else three heartbeat intervals; without either (or without
 * `nowMicros` or a line) nothing turns stale and `status` is returned as it is.
 */
export function statusAt<Status extends string>(
  status: Status,
  lastTs: string | null,
  heartbeatIntervalS: number | null,
  nowMicros: number | undefined,
  staleAfterS?: number | undefined,
): Status | "stale" {
  if (status !== "running" || nowMicros === undefined || lastTs === null) return status;
  const limitS =
    staleAfterS ?? (heartbeatIntervalS === null ? undefined : HEARTBEATS_BEFORE_STALE * heartbeatIntervalS);
  if (limitS === undefined) return status;
  // Integer microseconds on both sides: the comparison every reader makes alike.
  return nowMicros - toTimestampUs(lastTs) > Math.round(limitS * 1e6) ? "stale" : status;
}
