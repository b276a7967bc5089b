"""Durations and rates for people: `4.2s`, `3:07`, `1:02:03`; `69.5k steps/s`, `2.5s/step`.

The TypeScript package writes the same strings (its `formatDuration`, `formatRate`). Rounding is
done on integers, half up, so that both languages agree to the last digit: neither
`str.format` nor `toFixed` rounds the way the other does.
"""

from __future__ import annotations

import math

__all__ = ["format_duration", "format_quantity", "format_rate"]

#: three significant digits: enough to follow a rate, few enough to read at a glance
_SIGNIFICANT = 3
#: the suffix of each power of a thousand
_SUFFIXES = ("", "k", "M", "G", "T")


def format_duration(seconds: float) -> str:
    """`4.2s` under a minute, `M:SS` under an hour, else `H:MM:SS` (negative counts as 0)."""
    tenths = _round_half_up(max(0.0, seconds) * 10)
    if tenths < 600:
        return f"{tenths // 10}.{tenths % 10}s"
    whole = _round_half_up(max(0.0, seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def format_quantity(value: float) -> str:
    """Three significant digits, `k`/`M`/`G`/`T` from a thousand on, never an exponent."""
    if value == 0:
        return "0"
    if not math.isfinite(value):
        return str(value)  # `nan`, `inf`, `-inf`: the TypeScript twin spells them so too
    sign = "-" if value < 0 else ""
    digits, exponent = _three_digits(abs(value))
    if exponent < 0:
        return f"{sign}0.{'0' * (-exponent - 1)}{digits.rstrip('0')}"
    scale = min(exponent // 3, len(_SUFFIXES) - 1)
    whole = exponent - 3 * scale + 1  # digits before the point: 1 to 3 (more past the last suffix)
    integer, fraction = digits[:whole].ljust(whole, "0"), digits[whole:].rstrip("0")
    return sign + integer + (f".{fraction}" if fraction else "") + _SUFFIXES[scale]


def format_rate(steps_per_s: float) -> str:
    """`69.5k steps/s` from one step a second on; below it, how long a step takes (`2.5s/step`)."""
    if steps_per_s >= 1 or steps_per_s <= 0:
        return f"{format_quantity(steps_per_s)} steps/s"
    return f"{format_duration(1 / steps_per_s)}/step"


def _three_digits(value: float) -> tuple[str, int]:
    """`value` (> 0) rounded to three significant digits: the digits and the power of ten of the first."""
    exponent = math.floor(math.log10(value))
    # one exact power of ten and one IEEE operation: the same result in JavaScript
    shift = exponent - (_SIGNIFICANT - 1)
    mantissa = _round_half_up(value / 10**shift if shift >= 0 else value * 10**-shift)
    if mantissa >= 10**_SIGNIFICANT:  # 999.5 rounds up to the next power of ten
        mantissa, exponent = mantissa // 10, exponent + 1
    return str(mantissa), exponent


def _round_half_up(value: float) -> int:
    """To the nearest integer, halves up: `Math.floor(value + 0.5)` in TypeScript."""
    return math.floor(value + 0.5)
