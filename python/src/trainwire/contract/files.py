"""Files that other processes read while they change: they appear whole or not at all; and
files read from directories other people can write to: regular files only, never a FIFO that
blocks a reader forever, when asked never a link leading out of a directory, and, read with a
cap, never more bytes than the reader can hold."""

from __future__ import annotations

import json
import logging
import os
import stat
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

__all__ = [
    "O_NOFOLLOW",
    "FileTooLarge",
    "NotARegularFile",
    "inside",
    "open_regular",
    "read_capped",
    "read_file",
    "read_regular_text",
    "write_json_atomically",
    "write_text_atomically",
]

logger = logging.getLogger("trainwire.files")

# O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
#: where the platform has it (not on Windows): a link as the file's last component is refused
O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class NotARegularFile(OSError):
    """The path is a FIFO, a device, a socket or a directory, or leads out of the directory it
    must stay in."""


def inside(path: Path, root: Path) -> bool:
    """Whether `path` (resolved, links followed) lies inside the resolved `root`."""
    return Path(os.path.realpath(path)).is_relative_to(os.path.realpath(root))


def open_regular(path: Path, *, within: Path | None = None, follow_links: bool = True) -> IO[bytes]:
    """`path` opened for binary reading, only when it is a regular file (and, with `within`,
    when its resolved path lies inside that directory); `NotARegularFile` otherwise. Without
    `follow_links`, a link in the file's place is refused too (an `OSError`, `O_NOFOLLOW`).

    The checks are made on the opened file itself: a path swapped for a link or a FIFO
    between a check and the open is refused, not followed."""
    fd = os.open(path, _OPEN_FLAGS if follow_links else _OPEN_FLAGS | O_NOFOLLOW)
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


class FileTooLarge(OSError):
    """The file holds more bytes than its reader's cap: it counts as absent."""


#: the files already reported over their cap: one line per file, not one per read (a server
#: reads the same journal on every poll); bounded, so a directory of such files cannot grow it
_REPORTED: dict[str, None] = {}
_REPORTED_MOST = 4096
_REPORTED_LOCK = threading.Lock()


def read_capped(path: Path, cap: int, *, within: Path | None = None) -> bytes:
    """The bytes of `path` through `open_regular`, when it holds at most `cap` of them;
    `FileTooLarge` (an `OSError`, so the file counts as absent) otherwise, reported once per
    file on the `trainwire.files` logger. The size is checked on the opened file before a
    byte is read, and at most `cap + 1` bytes are read: a sparse file of gigabytes, or one
    growing while it is read, costs no more than `cap`."""
    with open_regular(path, within=within) as file:
        size = os.fstat(file.fileno()).st_size
        data = file.read(size + 1) if size <= cap else b""  # a buffer of the file's size, not the cap's
        if size < len(data) <= cap:  # grown since it was looked at: read on, up to the cap
            data += file.read(cap + 1 - len(data))
    if size > cap or len(data) > cap:
        _report_too_large(path, max(size, len(data)), cap)
        raise FileTooLarge(f"{path}: {max(size, len(data))} bytes, over the cap of {cap}")
    return data


def _report_too_large(path: Path, size: int, cap: int) -> None:
    key = str(path)
    with _REPORTED_LOCK:
        if key in _REPORTED:
            return
        if len(_REPORTED) >= _REPORTED_MOST:
            del _REPORTED[next(iter(_REPORTED))]
        _REPORTED[key] = None
    logger.warning("trainwire: %s holds %d bytes, over the %d bytes it may hold: read as absent", path, size, cap)


def read_file(
    path: str | os.PathLike[str], chunk_bytes: int = 1 << 20, *, offset: int = 0, within: Path | None = None
) -> Iterator[bytes]:
    """The bytes of a whole file as it is now (from `offset` on), in large chunks (for a stream
    read once); `NotARegularFile` when it is not a regular file (a FIFO would block, a device
    never end) or, given `within`, when it leads outside that directory (`open_regular`)."""
    with open_regular(Path(path), within=within) as handle:
        handle.seek(offset)
        while chunk := handle.read(chunk_bytes):
            yield chunk


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
