"""One step-indexed series of a run, bounded by downsampling: consecutive points of one
attempt share a bucket that keeps its first, lowest, highest and last point, and buckets
merge in pairs when the series outgrows its limit (the twin of the TypeScript `Series`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["Bucket", "Point", "Series"]

# A point: [arrival index, step, value, time]: the index orders the points of a bucket, the
# time (microseconds since the epoch, the line's `ts`) places it on a wall-clock axis.
Point = list[Any]
# A bucket of consecutive points of one attempt: [attempt, count, first, min, max, last].
Bucket = list[Any]


def _copied(buckets: list[Bucket]) -> list[Bucket]:
    """The buckets copied down to their points (a point is never changed in place, so one
    shared by first, min, max or last may become several); `copy.deepcopy` took 50 times as
    long, a tenth of a second for one series store of a long run."""
    return [[attempt, count, [*first], [*low], [*high], [*last]] for attempt, count, first, low, high, last in buckets]


def _merge_into(into: Bucket, other: Bucket) -> None:
    into[1] += other[1]
    # strict comparisons: on a tie the earlier point stays, in every language alike
    if other[3][2] < into[3][2]:
        into[3] = other[3]
    if other[4][2] > into[4][2]:
        into[4] = other[4]
    into[5] = other[5]


class Series:
    """One step-indexed series, downsampled by merging pairs of buckets when it outgrows its limit."""

    def __init__(self, max_points: int, snapshot: dict[str, Any] | None = None) -> None:
        # a bucket shows at most 4 points (first, min, max, last)
        self.max_buckets = max(1, max_points // 4)
        self._bucket_size: int = snapshot["bucket_size"] if snapshot else 1
        self.count: int = snapshot["count"] if snapshot else 0
        self._buckets: list[Bucket] = _copied(snapshot["buckets"]) if snapshot else []

    def add(self, attempt: int, step: int, value: float, time_us: int) -> None:
        point: Point = [self.count, step, value, time_us]
        self.count += 1
        buckets = self._buckets
        last = buckets[-1] if buckets else None
        if last is not None and last[0] == attempt and last[1] < self._bucket_size:
            # `_merge_into` of a one-point bucket, inline: the per-step path of every writer's journal
            last[1] += 1
            if value < last[3][2]:
                last[3] = point
            if value > last[4][2]:
                last[4] = point
            last[5] = point
        else:
            buckets.append([attempt, 1, point, point, point, point])
        while len(self._buckets) > self.max_buckets and self._compact():  # _compact makes a new list
            pass

    def extend(
        self,
        attempt: int,
        steps: Sequence[int],
        values: Sequence[Any],
        times: Sequence[Any],
        time_us: Callable[[Any], int] = int,
    ) -> None:
        """`add` of each step, value and time, None and non-finite values left out; the points
        filling the open bucket at once (first minimum and maximum, as `add` keeps them). A
        time is turned into microseconds by `time_us` only for a point a bucket keeps."""
        added = None if None in values else sum(values)
        if added is None or added - added != 0.0:  # a gap, or an infinity or NaN (or an overflow) among them
            kept = [index for index, value in enumerate(values) if value is not None and value - value == 0.0]
            steps, values, times = [steps[i] for i in kept], [values[i] for i in kept], [times[i] for i in kept]
        at, end = 0, len(values)
        while at < end:
            buckets = self._buckets
            last = buckets[-1] if buckets else None
            if last is None or last[0] != attempt or last[1] >= self._bucket_size or len(buckets) > self.max_buckets:
                self.add(attempt, steps[at], values[at], time_us(times[at]))  # a new bucket, or a compaction
                at += 1
                continue
            room = min(self._bucket_size - last[1], end - at)
            chunk = values[at : at + room]
            low, high = min(chunk), max(chunk)
            if low < last[3][2]:
                index = chunk.index(low)
                last[3] = [self.count + index, steps[at + index], low, time_us(times[at + index])]
            if high > last[4][2]:
                index = chunk.index(high)
                last[4] = [self.count + index, steps[at + index], high, time_us(times[at + index])]
            index = at + room - 1
            last[5] = [self.count + room - 1, steps[index], values[index], time_us(times[index])]
            last[1] += room
            self.count += room
            at += room

    def points(self) -> list[tuple[int, int, float, int]]:
        """The kept points in arrival order, as (attempt, step, value, time in microseconds)."""
        out: list[tuple[int, int, float, int]] = []
        for attempt, _count, *kept in self._buckets:
            previous = -1
            for index, step, value, time_us in sorted(kept, key=lambda point: point[0]):
                if index != previous:  # one point can be first, min, max and last at once
                    out.append((attempt, step, value, time_us))
                previous = index
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"bucket_size": self._bucket_size, "count": self.count, "buckets": _copied(self._buckets)}

    def _compact(self) -> bool:
        """Double the bucket size and merge neighbours of one attempt that fit; False if none did."""
        self._bucket_size *= 2
        merged: list[Bucket] = []
        for bucket in self._buckets:
            if merged and merged[-1][0] == bucket[0] and merged[-1][1] + bucket[1] <= self._bucket_size:
                _merge_into(merged[-1], bucket)
            else:
                merged.append(bucket)
        shrunk = len(merged) < len(self._buckets)
        self._buckets = merged
        return shrunk
