"""What each cell of the dashboard's runs list shows, as text, and what it sorts by: the
server filters and sorts the rows by these, so they are the page's own
(`typescript/dashboard/list-view.ts`, `RUN_COLUMNS` and `configColumn`), column for column.

Row rendering only: which rows a page holds, and in which order, is `serve.run_list`'s.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from trainwire.contract.clock import parse_timestamp_us
from trainwire.contract.humanize import format_duration
from trainwire.contract.printable import printable

__all__ = ["COLUMN_IDS", "cell_texts", "config_text", "number_text", "sort_value", "started_text"]

Row = Mapping[str, Any]
#: what a column sorts by: text, a number, or None (last in either order)
SortValue = str | float | int | None

_DASH = "–"


def number_text(value: Any) -> str:
    """A value as a cell shows it (the page's `text`): `–` for none, integers whole,
    other numbers to four significant digits as JavaScript's `toPrecision(4)` writes them."""
    if value is None:
        return _DASH
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, int) or (math.isfinite(value) and value == int(value)):
        return js_number(value)
    return _to_precision4(value)


def js_number(value: float | int) -> str:
    """JavaScript's `String(number)`: whole numbers below 1e21 without a fraction, else the
    shortest digits, in exponent form from 1e21 up and below 1e-6."""
    if isinstance(value, int) and abs(value) < 10**21:
        return str(value)
    value = float(value)
    if not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    shortest = Decimal(repr(abs(value)))  # Python's repr and JavaScript agree on the shortest digits
    power = shortest.adjusted()
    if -7 < power < 21:
        return sign + format(shortest.normalize(), "f")
    digits = format(shortest.normalize(), "e").partition("e")[0]
    return f"{sign}{digits}e{'+' if power >= 0 else '-'}{abs(power)}"


def _to_precision4(value: float) -> str:
    """JavaScript's `value.toPrecision(4)` (halves away from zero on the exact value)."""
    if not math.isfinite(value):
        return js_number(value)
    if value == 0:
        return "0.000"
    sign = "-" if value < 0 else ""
    exact = Decimal(abs(value))
    power = exact.adjusted()
    mantissa = exact.scaleb(-power).quantize(Decimal("1.000"), ROUND_HALF_UP)
    if mantissa >= 10:
        power += 1
        mantissa = exact.scaleb(-power).quantize(Decimal("1.000"), ROUND_HALF_UP)
    if power < -6 or power >= 4:
        return f"{sign}{mantissa}e{'+' if power >= 0 else '-'}{abs(power)}"
    return sign + format(mantissa.scaleb(power).quantize(Decimal(1).scaleb(power - 3)), "f")


def config_text(value: Any) -> str:
    """A config value as the run was given it (the page's `configText`): strings as they are,
    anything else as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return js_number(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def started_text(started_at: str | None) -> str:
    """The run's start in UTC to the second (`2026-12-07 13:05:12`), `–` without one."""
    instant = _instant(started_at)
    if instant is None:
        return _DASH
    return datetime.fromtimestamp(instant // 1_000_000, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def _instant(time: str | None) -> int | None:
    if not isinstance(time, str):
        return None
    try:
        return parse_timestamp_us(time)
    except (TypeError, ValueError, OverflowError):
        return None


def _progress(row: Row) -> float | None:
    step, total = row.get("step"), row.get("total_steps")
    return min(step / total, 1) if step is not None and total else None


def _tags(row: Row) -> str:
    return ", ".join(printable(tag) for tag in row.get("tags") or [])


def _duration(row: Row) -> str:
    seconds = row.get("duration_s")
    return _DASH if seconds is None or not math.isfinite(seconds) else format_duration(seconds)


def _progress_text(row: Row) -> str:
    total = row.get("total_steps")
    return number_text(row.get("step")) + (f"/{js_number(total)}" if total else "")


#: id -> (cell text, sort value), in the page's order of columns
_COLUMNS: dict[str, tuple[Callable[[Row], str], Callable[[Row], SortValue]]] = {
    "key": (lambda row: printable(row["key"]), lambda row: row["key"]),
    "run_id": (lambda row: printable(row["run_id"]), lambda row: row["run_id"]),
    "name": (lambda row: printable(row.get("name") or ""), lambda row: row.get("name")),
    "tags": (_tags, lambda row: _tags(row) or None),
    "status": (lambda row: printable(row.get("status") or _DASH).replace("_", " ", 1), lambda row: row.get("status")),
    "progress": (_progress_text, _progress),
    "last_loss": (lambda row: number_text(row.get("last_loss")), lambda row: row.get("last_loss")),
    "best_loss": (lambda row: number_text(row.get("best_loss")), lambda row: row.get("best_loss")),
    "started_at": (lambda row: started_text(row.get("started_at")), lambda row: _instant(row.get("started_at"))),
    "duration_s": (_duration, lambda row: row.get("duration_s")),
    "git_sha": (lambda row: printable((row.get("git_sha") or _DASH)[:10]), lambda row: row.get("git_sha")),
    "notes": (lambda row: printable(row.get("notes") or ""), lambda row: row.get("notes")),
}
COLUMN_IDS = tuple(_COLUMNS)
_CONFIG = "config:"


def cell_texts(row: Row) -> list[str]:
    """The texts of the row's cells in the columns every runs list has."""
    return [shown(row) for shown, _sorted in _COLUMNS.values()]


def config_cell(row: Row, name: str) -> str:
    """The text of the row's cell in the config column `name`."""
    config = row.get("config") or {}
    return printable(config_text(config[name])) if name in config else _DASH


def sort_value(row: Row, column: str) -> SortValue:
    """What `row` sorts by in `column` (a column id, or `config:<key>`); None sorts last."""
    if column.startswith(_CONFIG):
        config = row.get("config") or {}
        value = config.get(column[len(_CONFIG) :])
        if value is None or isinstance(value, (str, int, float)) and not isinstance(value, bool):
            return value
        return config_text(value)
    found = _COLUMNS.get(column)
    return found[1](row) if found is not None else None
