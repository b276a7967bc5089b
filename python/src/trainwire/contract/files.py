"""Files that other processes read while they change: they appear whole or not at all; and
files read from directories other people can write to: regular files only, never a FIFO that
blocks a reader forever, and, when asked, never a link leading out of a directory."""

from __future__ import annotations

import json
import os
import stat
import tempfile
from pathlib import Path
from typing import IO, Any

__all__ = [
    "NotARegularFile",
    "inside",
    "open_regular",
    "read_regular_text",
    "write_json_atomically",
    "write_text_atomically",
]

# O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


class NotARegularFile(OSError):
    """The path is a FIFO, a device, a socket or a directory, or leads out of the directory it
    must stay in."""


def inside(path: Path, root: Path) -> bool:
    """Whether `path` (resolved, links followed) lies inside the resolved `root`."""
    return Path(os.path.realpath(path)).is_relative_to(os.path.realpath(root))


def open_regular(path: Path, *, within: Path | None = None) -> IO[bytes]:
    """`path` opened for binary reading, only when it is a regular file (and, with `within`,
    when its resolved path lies inside that directory); `NotARegularFile` otherwise.

    The checks are made on the opened file itself: a path swapped for a link or a FIFO
    between a check and the open is refused, not followed."""
    fd = os.open(path, _OPEN_FLAGS)
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise NotARegularFile(f"{path}: not a regular file")
        if within is not None:
            resolved = Path(os.path.realpath(path))
            if not inside(resolved, within):
                raise NotARegularFile(f"{path}: leads outside {within}")
            now = os.stat(resolved)
            if (now.st_dev, now.st_ino) != (status.st_dev, status.st_ino):
                raise NotARegularFile(f"{path}: changed while it was opened")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular_text(path: Path, *, within: Path | None = None) -> str:
    """The text of `path` through `open_regular`: a FIFO or a link out of `within` raises
    `NotARegularFile` (an `OSError`) instead of blocking or being followed."""
    with open_regular(path, within=within) as file:
        return file.read().decode("utf-8")


def write_text_atomically(target: Path, text: str) -> None:
    """Write `text` to `target` through a temporary file beside it and `os.replace`, so
    that a reader sees the old file or the new one, never half of it."""
    fd, temp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as temp:
            temp.write(text)
        os.replace(temp_name, target)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise


def write_json_atomically(target: Path, body: Any, *, indent: int | None = None) -> None:
    """`body` as JSON (`indent`ed and newline-ended when `indent` is given), atomically."""
    text = json.dumps(body, ensure_ascii=False, indent=indent)
    write_text_atomically(target, text + "\n" if indent is not None else text)
