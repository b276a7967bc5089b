"""Argument types shared by the commands: each refuses bad input with a message argparse prints.

argparse turns an `ArgumentTypeError` into one line on stderr and the usage exit code 2.
"""

from __future__ import annotations

import argparse
import math
import tempfile
from datetime import datetime
from pathlib import Path

from trainwire.contract.clock import parse_timestamp_us

__all__ = ["output_directory", "positive_seconds", "rfc3339_time"]

#: (start, width) of year, month, day, hour, minute, second in an RFC 3339 time
_FIELDS = ((0, 4), (5, 2), (8, 2), (11, 2), (14, 2), (17, 2))


def positive_seconds(text: str) -> float:
    """A finite number of seconds above 0 (`inf` and `nan` are refused)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds: {text!r}")
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0: {text!r}")
    return value


def rfc3339_time(text: str) -> str:
    """An RFC 3339 time that exists on the calendar (`2026-13-45T...` is refused)."""
    try:
        parse_timestamp_us(text)  # the form; its fields are then at fixed places
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an RFC 3339 time (like 2026-11-29T10:00:00Z): {text!r}") from None
    year, month, day, hour, minute, second = (int(text[start : start + width]) for start, width in _FIELDS)
    offset = "" if text[-1] in "Zz" else text[-6:]
    try:
        # RFC 3339 allows a leap second (60); datetime does not, so that one is checked apart
        datetime(year, month, day, hour, minute, min(second, 59))
        if second > 60 or (offset and (int(offset[1:3]) > 23 or int(offset[4:6]) > 59)):
            raise ValueError("second or offset out of range")
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"not a valid time ({error}): {text!r}") from None
    return text


def output_directory(text: str) -> Path:
    """A directory that exists or can be created, and that can be written (created here if needed)."""
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass  # the run will write here: find out now, not after the model is loaded
    except OSError as error:
        raise argparse.ArgumentTypeError(f"{text}: cannot write there ({error.strerror or error})") from None
    return path
