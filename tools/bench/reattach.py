"""Re-attach by offset, for any reader: the same tail read after a large and a small stream."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from context import Context
from records import Measurement, median, round_ratios
from scale import MB
from streams import line_offset_before

__all__ = ["TimeReattach", "measure_reattach"]

#: (stream, offset) -> seconds of each timed re-attach
TimeReattach = Callable[[Path, int], list[float]]


def measure_reattach(ctx: Context, time_reattach: TimeReattach) -> Measurement:
    """Milliseconds to resume near the end of the large stream, against the same on the small one."""
    times = []
    for size in (ctx.scale.large_bytes, ctx.scale.small_bytes):
        path = ctx.stream(size)
        offset = line_offset_before(path, path.stat().st_size - ctx.scale.reattach_tail_bytes)
        times.append(time_reattach(path, offset))
    large, small = (ctx.stream(size).stat().st_size / MB for size in (ctx.scale.large_bytes, ctx.scale.small_bytes))
    return Measurement(
        median(times[0]) * 1e3,
        median(times[1]) * 1e3,
        rounds=round_ratios(times[0], times[1]),
        notes=f"the last {ctx.scale.reattach_tail_bytes >> 10} KiB of {large:.0f} MB vs {small:.0f} MB, "
        f"median of {ctx.scale.reattach_repeats}",
    )
