"""The plain steps of a batch of lines, for the folds that take them at once (the summary's,
the series'): what a training loop writes between two other lines, the others one by one."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from trainwire.contract.clock import parse_timestamp_us

__all__ = ["not_a_plain_step", "segments", "stamp_reader"]

Line = Mapping[str, Any]


def segments(lines: Sequence[Line], is_other: Callable[[Line], bool]) -> Iterator[tuple[bool, Sequence[Line]]]:
    """The lines in order, in parts: `(True, lines)` for two or more consecutive lines that are
    not `is_other`, `(False, lines)` for the others (each alone, or all of them when most are)."""
    others = [index for index, line in enumerate(lines) if is_other(line)]
    if len(others) * 2 > len(lines):  # mostly other lines: one by one
        yield False, lines
        return
    start = 0
    for index in [*others, len(lines)]:
        if index - start > 1:
            yield True, lines[start:index]
        elif index > start:
            yield False, lines[start:index]
        if index < len(lines):
            yield False, lines[index : index + 1]
        start = index + 1


def not_a_plain_step(line: Line) -> bool:
    """Not a step the series take at once: another event, metrics, a trial, an odd step or time."""
    return (
        line.get("event") != "train.step"
        or "metrics" in line
        or "trial" in line
        or type(line.get("step")) is not int
        or type(line.get("ts")) is not str
    )


def stamp_reader() -> Callable[[str], int]:
    """`parse_timestamp_us`, the writers' form (`...T12:34:56.123456Z`) parsed once a minute,
    its seconds and microseconds read as one number."""
    minutes: dict[str, int] = {}

    def time_us(stamp: str) -> int:
        tail = stamp[17:19] + stamp[20:26]
        if len(stamp) == 27 and stamp[26] == "Z" and stamp[19] == "." and tail.isdigit() and tail.isascii():
            minute = minutes.get(stamp[:17])
            if minute is None:
                minute = minutes[stamp[:17]] = parse_timestamp_us(stamp) - int(tail)
            return minute + int(tail)
        return parse_timestamp_us(stamp)

    return time_us
