"""Field values as the contract accepts them: the UNSET default, error info, metrics maps,
clipped texts, durations and fresh run ids."""

from __future__ import annotations

import enum
import logging
import secrets
import time
from collections.abc import Callable, Mapping
from typing import Any, Union

from trainwire.contract.limits import MESSAGE_LIMIT
from trainwire.writer.encoding import safe_str, to_scalar
from trainwire.writer.redaction import redact_text
from trainwire.writer.values import BAD, number

__all__ = [
    "UNSET",
    "ErrorLike",
    "Unset",
    "clean_metrics",
    "error_info",
    "microseconds",
    "new_run_id",
    "param_value",
]

logger = logging.getLogger("trainwire.writer")


class Unset(enum.Enum):
    """The type of `UNSET`: an optional field that was not given."""

    UNSET = "UNSET"

    def __repr__(self) -> str:
        return "UNSET"


#: default of optional fields: left out of the line unless given (`None` writes `null`)
UNSET = Unset.UNSET

#: what `error=` accepts: an exception, a `(type, message)` pair, a `{type, message}` mapping
ErrorLike = Union[BaseException, tuple[Any, Any], Mapping[str, Any], str, None]


def error_info(error: ErrorLike) -> dict[str, str] | None:
    """`{type, message}` (both cut to 200 characters, secrets in the message masked) from an
    exception, a `(type, message)` pair or a mapping; None stays None."""
    if error is None:
        return None
    if isinstance(error, BaseException):
        kind: Any = type(error).__name__
        message: Any = safe_str(error)
    elif isinstance(error, tuple) and len(error) == 2:
        kind, message = error
        kind = getattr(kind, "__name__", kind)
    elif isinstance(error, Mapping):
        kind, message = error.get("type"), error.get("message", "")
    else:
        kind, message = "Error", error
    # secrets masked before the cut, so that a cut cannot leave half a secret unmasked
    return {
        "type": safe_str(kind)[:MESSAGE_LIMIT] or "Error",
        "message": redact_text(safe_str(message))[:MESSAGE_LIMIT],
    }


def clean_metrics(
    metrics: Mapping[str, Any] | None, complain: Callable[[str, str], None] | None = None
) -> dict[str, Any]:
    """A metrics map the contract accepts: numbers and None kept, numpy/torch scalars and
    `Decimal`s made numbers, other values and bad names left out (told to `complain`)."""
    if not metrics:
        return {}
    clean: dict[str, Any] = {}
    for name, value in metrics.items():
        key = str(name)
        checked = number(value)
        if checked is BAD or not 1 <= len(key) <= 256:
            message = f"metric {key[:80]!r}={value!r} is not a number with a name of 1 to 256 characters; left out"
            if complain is None:
                logger.debug("trainwire: %s", message)
            else:
                complain("metric", message)
            continue
        clean[key] = checked
    return clean


def param_value(value: Any) -> Any:
    """A trial parameter as written: JSON scalars as they are, other values as their string."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    scalar = to_scalar(value)
    return scalar if isinstance(scalar, (bool, int, float)) else safe_str(value)


def microseconds(seconds: float) -> float:
    """Seconds rounded to the microsecond (the precision of `ts`), never negative.

    Keeps fake-clock durations exact (0.3, not 0.30000000000000004); cheaper than round().
    """
    return int(seconds * 1_000_000 + 0.5) / 1_000_000 if seconds > 0 else 0.0


def new_run_id(epoch_seconds: float | None = None) -> str:
    """A fresh run id: `<UTC yyyymmddTHHMMSS>-<6 hex digits>`."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(time.time() if epoch_seconds is None else epoch_seconds))
    return f"{stamp}-{secrets.token_hex(3)}"
