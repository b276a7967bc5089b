"""When a running run is `stale` (reader rule 4): one pure function for every reader.

The reader state, the run catalog (`trainwire runs`, the dashboard) and `tail` all ask it,
and the TypeScript package's `statusAt` answers the same for the same
inputs, so a run is stale at the same moment wherever it is looked at.
"""

from __future__ import annotations

import math

from trainwire.contract.clock import parse_timestamp_us

__all__ = ["HEARTBEATS_BEFORE_STALE", "status_at"]

#: without `stale_after_s`, a run is stale after this many heartbeat intervals of silence
HEARTBEATS_BEFORE_STALE = 3


def status_at(
    status: str,
    last_ts: str | None,
    heartbeat_interval_s: float | None,
    now_us: int | None,
    stale_after_s: float | None = None,
) -> str:
    """`stale` when a `running` run's last line (`last_ts`) is older than the limit at `now_us`.

    The limit is `stale_after_s`, else three heartbeat intervals; without either (or
    without `now_us` or a line) nothing turns stale and `status` is returned as it is.
    """
    if status != "running" or now_us is None or last_ts is None:
        return status
    limit_s = stale_after_s
    if limit_s is None and heartbeat_interval_s is not None:
        limit_s = HEARTBEATS_BEFORE_STALE * heartbeat_interval_s
    if limit_s is None:
        return status
    silence_us = now_us - parse_timestamp_us(last_ts)
    # integer microseconds on both sides, rounded as JavaScript's Math.round: every reader alike
    return "stale" if silence_us > _round_half_up(limit_s * 1_000_000) else status


def _round_half_up(value: float) -> int:
    """JavaScript's `Math.round`: to the nearest integer, halves toward +infinity."""
    floor = math.floor(value)
    return floor + 1 if value - floor >= 0.5 else floor
