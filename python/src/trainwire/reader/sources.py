"""Where stream bytes come from: a file that grows (followed live) or a process's stdout.

A file is opened as the server opens one (`contract.files.open_regular`): without blocking,
and only when it is a regular file. A FIFO in a stream's place would hold a plain `open`
until some writer opened it, for ever if none does, and a device would never end; either
is a `NotARegularFile` (`PATH: not a regular file`), the one line the commands print.
"""

from __future__ import annotations

import logging
import os
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from trainwire.contract.files import open_regular, read_file

__all__ = ["FileFollower", "follow_file", "read_file", "read_process"]

logger = logging.getLogger("trainwire.reader.sources")

_CHUNK_BYTES = 1 << 16


class FileFollower:
    """Yields a file's bytes as they are appended, like `tail -F`.

    Waits for a file that does not exist yet. When the file is truncated or replaced (a
    new inode at the path), it starts again from offset 0, counts a reset and calls
    `on_reset(reason)` before yielding the new bytes: the caller must start a fresh
    reader then. Reading starts at `offset` with a seek, so a re-attach costs only the
    new bytes. A file that is truncated and grown past the old size between two polls
    cannot be told from one that grew. Stops once `stop` is set (after reading what is there) or when the
    consumer stops iterating. A path that is not a regular file, at the start or once it was
    replaced, raises `NotARegularFile`.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        offset: int = 0,
        poll_interval_s: float = 0.25,
        stop: threading.Event | None = None,
        on_reset: Callable[[str], None] | None = None,
        chunk_bytes: int = _CHUNK_BYTES,
        yield_when_idle: bool = False,
    ) -> None:
        self.path = Path(path)
        #: the offset of the next byte to read
        self.offset = offset
        self.poll_interval_s = poll_interval_s
        self.stop = stop if stop is not None else threading.Event()
        self.on_reset = on_reset
        self.chunk_bytes = chunk_bytes
        #: yield b"" each time the end of the file is reached, before waiting: lets the
        #: consumer act (redraw, decide to stop) while nothing is written
        self.yield_when_idle = yield_when_idle
        #: how many times the file was truncated or replaced
        self.resets = 0

    def __iter__(self) -> Iterator[bytes]:
        handle: IO[bytes] | None = None
        identity: tuple[int, int] | None = None
        try:
            while True:
                if handle is None:
                    handle, identity = self._open()
                    if handle is None:
                        if self.yield_when_idle:
                            yield b""
                        if self._wait():
                            return
                        continue
                chunk = handle.read(self.chunk_bytes)
                if chunk:
                    self.offset += len(chunk)
                    yield chunk
                    continue
                # At the end: was the file truncated or replaced meanwhile?
                change = self._change(handle, identity)
                if change == "replaced":
                    handle.close()
                    handle = None
                    self._reset("replaced")
                    continue
                if change == "truncated":
                    handle.seek(0)
                    self._reset("truncated")
                    continue
                if self.yield_when_idle:
                    yield b""
                if self._wait():
                    return
        finally:
            if handle is not None:
                handle.close()

    def _open(self) -> tuple[IO[bytes] | None, tuple[int, int] | None]:
        try:
            handle = open_regular(self.path)  # closed by __iter__
        except FileNotFoundError:
            return None, None
        status = os.fstat(handle.fileno())
        if self.offset > status.st_size:
            self._reset("truncated")  # shorter than where we were: not the same stream
        handle.seek(self.offset)
        return handle, (status.st_dev, status.st_ino)

    def _change(self, handle: IO[bytes], identity: tuple[int, int] | None) -> str | None:
        try:
            status = os.stat(self.path)
        except FileNotFoundError:
            return None  # removed: keep waiting for it to come back
        if (status.st_dev, status.st_ino) != identity:
            return "replaced"
        if status.st_size < self.offset:
            return "truncated"
        return None

    def _reset(self, reason: str) -> None:
        logger.info("%s was %s; reading it again from the start", self.path, reason)
        self.offset = 0
        self.resets += 1
        if self.on_reset is not None:
            self.on_reset(reason)

    def _wait(self) -> bool:
        """Sleep one poll interval; True when asked to stop."""
        if self.stop.is_set():
            return True
        self.stop.wait(self.poll_interval_s)
        return False


def follow_file(
    path: str | os.PathLike[str],
    *,
    offset: int = 0,
    poll_interval_s: float = 0.25,
    stop: threading.Event | None = None,
    on_reset: Callable[[str], None] | None = None,
) -> Iterator[bytes]:
    """Yield the bytes of `path` from `offset` as they are appended (see `FileFollower`)."""
    return iter(FileFollower(path, offset=offset, poll_interval_s=poll_interval_s, stop=stop, on_reset=on_reset))


def read_process(
    source: subprocess.Popen[bytes] | IO[bytes] | int, *, chunk_bytes: int = _CHUNK_BYTES
) -> Iterator[bytes]:
    """Yield a process's stdout (or a binary pipe, or a file descriptor) as bytes arrive, until end of file.

    Each chunk is what the pipe had ready, not a full buffer, so lines arrive live.
    """
    stream = source.stdout if isinstance(source, subprocess.Popen) else source
    if stream is None:
        raise ValueError("the process was not started with stdout=subprocess.PIPE")
    read = _reader(stream, chunk_bytes)
    while True:
        chunk = read()
        if not chunk:
            return
        yield chunk


def _reader(stream: Any, chunk_bytes: int) -> Callable[[], bytes]:
    """A call that returns what the pipe has ready (not a full buffer), b"" at the end."""
    if hasattr(stream, "read1"):
        return lambda: stream.read1(chunk_bytes)  # buffered: honours bytes already buffered
    if isinstance(stream, int):
        return lambda: os.read(stream, chunk_bytes)
    return lambda: stream.read(chunk_bytes)
