"""The run's step file (`steps.jsonl`) written by its journal's thread, the journal directory
taken as hostile ground once the run has begun (anyone who can write there may have put a
FIFO, a link or a device in the file's place).

- The file is opened without following a link (`O_NOFOLLOW`, the journal directory too),
  without blocking (`O_NONBLOCK`: a FIFO never holds the thread) and written only once
  `fstat` says it is a regular file. Anything else fails the batch like a full disk.
- A batch that fails (a full disk, a read-only or gone file system, a file size limit, a
  file that is not a regular file) stays in memory, up to `MAX_UNWRITTEN_RECORDS`, and is
  written before the next one: every retry brings the file up to date when space returns.
  Records past the bound are lost, counted (`lost`) with the first loss's reason.
- No torn line between batches: a write that stopped part way is cut back to where the batch
  began before the batch is written again; a file that does not end in a newline gets one.
- The file's first line names its run (`{"run_id": ...}`): a reader tells another run's file
  from this one's.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from trainwire.contract.files import O_NOFOLLOW, NotARegularFile
from trainwire.journal.step_records import encode_kept_steps, step_file_header

__all__ = ["MAX_UNWRITTEN_RECORDS", "StepFileWriter"]

#: the kept steps a failing step file keeps in memory to write once it can (then they are lost)
MAX_UNWRITTEN_RECORDS = 64 * 512

_FLAGS = os.O_RDWR | os.O_CREAT | os.O_APPEND | O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0)
_FLAGS |= getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
#: the journal directory is opened itself (no link) and the file inside it, where the platform can
_BY_DIR_FD = os.open in os.supports_dir_fd and bool(getattr(os, "O_DIRECTORY", 0))


class StepFileWriter:
    """Appends run `run_id`'s kept steps to `path` in whole lines, keeping a failed batch."""

    def __init__(self, path: Path, run_id: str) -> None:
        self.path = path
        self.run_id = run_id
        #: records in the file, and records that never will be (over the bound, or left at the end)
        self.written = 0
        self.lost = 0
        #: the first loss: what, where, why (one line)
        self.reason: str | None = None
        self._unwritten: list[dict[str, Any]] = []
        self._cut_to: int | None = None  # where a batch that stopped part way began (a cut failed)
        self._failure: OSError | None = None  # the last write's

    @property
    def unwritten(self) -> int:
        """The records kept in memory for a later batch."""
        return len(self._unwritten)

    def append(self, records: Sequence[dict[str, Any]]) -> None:
        """Writes the records kept from failed batches and then `records`, in one write;
        on an `OSError` keeps them (up to the bound) and raises it."""
        pending = self._unwritten + list(records) if self._unwritten else list(records)
        if len(pending) > MAX_UNWRITTEN_RECORDS:
            self.lose(len(pending) - MAX_UNWRITTEN_RECORDS, "kept in memory past the bound while it failed")
            pending = pending[:MAX_UNWRITTEN_RECORDS]
        if not pending:
            return
        try:
            self._write(encode_kept_steps(pending))
        except OSError as error:
            self._unwritten = pending
            self._failure = error
            raise
        self._unwritten = []
        self.written += len(pending)

    def lose(self, count: int, why: str) -> None:
        """Counts `count` records that never reach the file, the first loss with its reason."""
        if count <= 0:
            return
        self.lost += count
        if self.reason is None:
            cause = f" ({self._failure})" if self._failure is not None else ""
            self.reason = f"{count} kept step(s) not written to {self.path}: {why}{cause}"

    def give_up(self, waiting: int = 0) -> None:
        """The run ends: what is still kept in memory (and `waiting` records more) never
        reaches the file."""
        self.lose(len(self._unwritten) + waiting, "the file could not be written before the run ended")
        self._unwritten = []

    def _write(self, data: bytes) -> None:
        fd = self._open()
        try:
            status = os.fstat(fd)
            if not stat.S_ISREG(status.st_mode):
                raise NotARegularFile(f"{self.path}: not a regular file")
            start = self._whole_end(fd, status.st_size)
            if start == 0:
                data = step_file_header(self.run_id) + data
            written = 0
            try:
                while written < len(data):
                    written += os.write(fd, data[written:])
            except OSError:
                if written:
                    self._cut_back(fd, start)
                raise
        finally:
            os.close(fd)

    def _open(self) -> int:
        directory = self.path.parent
        directory.mkdir(parents=True, exist_ok=True)
        if not _BY_DIR_FD:
            return os.open(self.path, _FLAGS, 0o644)
        dir_fd = os.open(directory, _DIR_FLAGS)
        try:
            return os.open(self.path.name, _FLAGS, 0o644, dir_fd=dir_fd)
        finally:
            os.close(dir_fd)

    def _whole_end(self, fd: int, size: int) -> int:
        """Where the batch goes: after a cut owed from a batch that stopped part way, and after
        a newline (one is added to a last line without one)."""
        if self._cut_to is not None and size >= self._cut_to:
            os.ftruncate(fd, self._cut_to)
            size = self._cut_to
        self._cut_to = None
        if size > 0 and _byte_at(fd, size - 1) != b"\n":
            os.write(fd, b"\n")  # someone else's torn line: ended, so a reader skips it alone
            size += 1
        return size

    def _cut_back(self, fd: int, start: int) -> None:
        """Takes the part of a batch written back off the file, now or before the next batch."""
        try:
            os.ftruncate(fd, start)
        except OSError:
            self._cut_to = start


def _byte_at(fd: int, offset: int) -> bytes:
    """The byte at `offset` (`os.pread` is not everywhere; writes append whatever the position)."""
    os.lseek(fd, offset, os.SEEK_SET)
    return os.read(fd, 1)
