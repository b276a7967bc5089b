"""Clocks: the real one, a fake one for tests and scenarios, and the `ts` formatter."""

from __future__ import annotations

import calendar
import re
import time
from typing import Protocol, runtime_checkable

__all__ = ["Clock", "FakeClock", "SystemClock", "format_ts", "parse_ts"]


@runtime_checkable
class Clock(Protocol):
    """Where a writer reads the time: `now()` stamps lines, `monotonic()` measures durations."""

    def now(self) -> float:
        """Seconds since the Unix epoch (UTC)."""
        ...

    def monotonic(self) -> float:
        """Seconds from an arbitrary origin that never goes back."""
        ...


class SystemClock:
    """The machine's clocks."""

    now = staticmethod(time.time)
    monotonic = staticmethod(time.monotonic)

    def __repr__(self) -> str:
        return "SystemClock()"


class FakeClock:
    """A clock that moves only when told to; both readings move together.

    Time is kept in whole microseconds so that durations come out exact
    (`advance(0.1)` three times is 0.3 s, not 0.30000000000000004 s).
    """

    def __init__(self, start: str | float = 0.0) -> None:
        self._start_us = parse_ts(start) if isinstance(start, str) else round(start * 1_000_000)
        self._elapsed_us = 0

    def now(self) -> float:
        return (self._start_us + self._elapsed_us) / 1_000_000

    def monotonic(self) -> float:
        return self._elapsed_us / 1_000_000

    def advance(self, seconds: float) -> None:
        """Move both readings forward by `seconds` (not negative)."""
        if not seconds >= 0:
            raise ValueError(f"a clock cannot go back (advance({seconds!r}))")
        self._elapsed_us += round(seconds * 1_000_000)

    def __repr__(self) -> str:
        return f"FakeClock({format_ts(self.now())!r})"


_TS_RE = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?Z")


def parse_ts(text: str) -> int:
    """Microseconds since the epoch of a contract timestamp (`...T...Z`); digits past 6 are cut."""
    match = _TS_RE.fullmatch(text)
    if match is None:
        raise ValueError(f"not a trainwire timestamp (YYYY-MM-DDTHH:MM:SS[.f]Z): {text!r}")
    *fields, fraction = match.groups()
    seconds = calendar.timegm(tuple(int(field) for field in fields) + (0, 0, 0))  # type: ignore[arg-type]
    return seconds * 1_000_000 + int((fraction or "0").ljust(6, "0")[:6])


# The seconds part changes at most once a second: keep the last one formatted.
# One tuple, replaced whole, so that threads never see a half-updated cache.
_last_second: tuple[int, str] = (-1, "")


def format_ts(epoch_seconds: float) -> str:
    """`YYYY-MM-DDTHH:MM:SS.ffffffZ` (UTC, microseconds, rounded to the nearest; not before 1970)."""
    global _last_second
    micros = int(epoch_seconds * 1_000_000 + 0.5)
    seconds = micros // 1_000_000
    last = _last_second
    if seconds != last[0]:
        last = _last_second = (seconds, time.strftime("%Y-%m-%dT%H:%M:%S.", time.gmtime(seconds)))
    return "%s%06dZ" % (last[1], micros - seconds * 1_000_000)
