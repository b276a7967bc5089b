"""Clocks (the real one, a fake one for tests and scenarios) and the timestamps they write and read."""

from __future__ import annotations

import re
import time
from datetime import datetime, timezone
from typing import Protocol, runtime_checkable

__all__ = ["Clock", "FakeClock", "SystemClock", "format_ts", "now_us", "parse_timestamp_us", "to_timestamp_us"]


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
        if isinstance(start, str) and not _CONTRACT_TIMESTAMP.fullmatch(start):
            raise ValueError(f"not a trainwire timestamp (YYYY-MM-DDTHH:MM:SS[.f]Z): {start!r}")
        self._start_us = parse_timestamp_us(start) if isinstance(start, str) else round(start * 1_000_000)
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


#: the contract's `ts` form: `T`, up to nine fraction digits, `Z`
_CONTRACT_TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,9})?Z")
#: an RFC 3339 time; `T` or a space, any fraction, `Z` or an offset (what a caller may pass as "now")
_TIMESTAMP = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt ]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?([Zz]|[+-][0-9]{2}:[0-9]{2})"
)


#: (`YYYY-MM-DDTHH:MM:` of the last writer-form time parsed, its minute in microseconds): lines
#: of a stream come in the same minute, so most need only their seconds read
_LAST_MINUTE: tuple[str, int] = ("", 0)


def parse_timestamp_us(value: str) -> int:
    """Microseconds since the Unix epoch of an RFC 3339 time (fraction truncated to microseconds)."""
    global _LAST_MINUTE
    if len(value) == 27 and value[26] == "Z" and value[19] == ".":  # the writers' form: 6 digits, Z
        prefix, minute_us = _LAST_MINUTE
        seconds, fraction = value[17:19], value[20:26]
        if value.startswith(prefix) and prefix and seconds.isdigit() and fraction.isdigit() and value.isascii():
            return minute_us + int(seconds) * 1_000_000 + int(fraction)
        parsed = _parse_timestamp_us(value)
        _LAST_MINUTE = (value[:17], parsed - int(seconds) * 1_000_000 - int(fraction))
        return parsed
    return _parse_timestamp_us(value)


def _parse_timestamp_us(value: str) -> int:
    match = _TIMESTAMP.fullmatch(value)
    if match is None:
        raise ValueError(f"not an RFC 3339 time: {value!r}")
    year, month, day, hour, minute, second = (int(part) for part in match.groups()[:6])
    micros = int((match.group(7) or "").ljust(6, "0")[:6])
    offset = match.group(8)
    offset_s = 0
    if offset not in ("Z", "z"):
        sign = -1 if offset[0] == "-" else 1
        offset_s = sign * (int(offset[1:3]) * 3600 + int(offset[4:6]) * 60)
    seconds = _days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offset_s
    return seconds * 1_000_000 + micros


def to_timestamp_us(now: str | datetime) -> int:
    """`now` as microseconds since the epoch; a naive datetime is taken as UTC."""
    if isinstance(now, str):
        return parse_timestamp_us(now)
    if now.tzinfo is None:
        now = now.replace(tzinfo=timezone.utc)
    now = now.astimezone(timezone.utc)
    seconds = _days_from_civil(now.year, now.month, now.day) * 86400 + now.hour * 3600 + now.minute * 60 + now.second
    return seconds * 1_000_000 + now.microsecond


def now_us() -> int:
    """The current time in microseconds since the epoch, as run states compare it."""
    return to_timestamp_us(datetime.now(timezone.utc))


def _days_from_civil(year: int, month: int, day: int) -> int:
    # Howard Hinnant's algorithm: exact for any proleptic Gregorian date, year 0 included.
    year -= month <= 2
    era = year // 400
    year_of_era = year - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146097 + day_of_era - 719468


# The seconds part changes at most once a second: keep the last one formatted.
# One tuple, replaced whole, so that threads never see a half-updated cache.
_last_second: tuple[int, str] = (-1, "")
# The fraction as two looked-up halves: cheaper than formatting six digits on every line.
_THREE_DIGITS = tuple(f"{number:03d}" for number in range(1000))


def format_ts(epoch_seconds: float) -> str:
    """`YYYY-MM-DDTHH:MM:SS.ffffffZ` (UTC, microseconds, rounded to the nearest; not before 1970)."""
    global _last_second
    seconds, micros = divmod(int(epoch_seconds * 1_000_000 + 0.5), 1_000_000)
    last = _last_second
    if seconds != last[0]:
        last = _last_second = (seconds, time.strftime("%Y-%m-%dT%H:%M:%S.", time.gmtime(seconds)))
    millis, micros = divmod(micros, 1000)
    return last[1] + _THREE_DIGITS[millis] + _THREE_DIGITS[micros] + "Z"
