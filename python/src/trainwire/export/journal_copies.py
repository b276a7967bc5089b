"""Copies of a run's stream and journal files for a tracker, made as the server reads them.

A tracker uploads what it is given, so an export hands it copies it made itself, never the
files it found: each a regular file reached without a link (checked on the opened file), under
its cap (the stream and the step file under the export's `copy_cap`, `DEFAULT_COPY_CAP`; the
others under the caps of `journal.files`), not sparse (a file of gigabytes holding
kilobytes), and the summary only when its schema accepts it. A file refused is one line on
stderr and left out; the export goes on.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import IO

from trainwire.contract.files import NotARegularFile, open_regular
from trainwire.contract.layout import (
    CONFIG_DIFF_FILE,
    CONFIG_FILE,
    DIFF_FILE,
    ENVIRONMENT_FILE,
    NOTES_FILE,
    SERIES_FILE,
    STEPS_FILE,
    SUMMARY_FILE,
)
from trainwire.journal.files import (
    MAX_CONFIG_BYTES,
    MAX_DIFF_BYTES,
    MAX_NOTES_BYTES,
    MAX_SUMMARY_BYTES,
    read_summary,
)
from trainwire.journal.snapshot_check import MAX_SNAPSHOT_BYTES

__all__ = ["DEFAULT_COPY_CAP", "CopyRefused", "copy_checked", "file_cap", "report"]

#: the stream and the step file are copied up to this many bytes: a long run's stream is a
#: few GB, and more is a file no tracker should be sent by default (`--max-copy-bytes`)
DEFAULT_COPY_CAP = 8 << 30
#: each journal file an export sends, with its cap (None: the export's `copy_cap`); any other
#: file in a run's journal directory is not the journal's and is never sent
_CAPS: dict[str, int | None] = {
    CONFIG_FILE: MAX_CONFIG_BYTES,
    CONFIG_DIFF_FILE: MAX_CONFIG_BYTES,
    ENVIRONMENT_FILE: MAX_CONFIG_BYTES,
    DIFF_FILE: MAX_DIFF_BYTES,
    NOTES_FILE: MAX_NOTES_BYTES,
    SUMMARY_FILE: MAX_SUMMARY_BYTES,
    SERIES_FILE: MAX_SNAPSHOT_BYTES,
    STEPS_FILE: None,
}
#: a file holding less than an eighth of its size on disk, past this size, is sparse: holes
#: read as zeros, gigabytes of them, that the writer never wrote
_SPARSE_FROM_BYTES = 1 << 20
_SPARSE_RATIO = 8
_BLOCK_BYTES = 512  # `st_blocks` counts 512-byte blocks on every POSIX system


class CopyRefused(OSError):
    """The file is not copied: a link, not a regular file, over its cap, sparse or invalid."""


def file_cap(name: str, copy_cap: int) -> int | None:
    """The cap of the journal file `name`; None when it is not one of the journal's files."""
    if name not in _CAPS:
        return None
    cap = _CAPS[name]
    return copy_cap if cap is None else cap


def copy_checked(source: Path, target: Path, cap: int) -> None:
    """`source` copied to `target`, read through the opened file; `CopyRefused` (nothing
    written) when it is a link, not a regular file, over `cap` bytes or sparse, and for a
    summary when the schema refuses it."""
    try:
        with open_regular(source) as file:
            status = os.fstat(file.fileno())
            if _identity(os.lstat(source)) != _identity(status):
                raise CopyRefused(f"{source}: a link, not the journal's own file; not copied")
            size = status.st_size
            if size > cap:
                raise CopyRefused(f"{source}: {size} bytes, over the {cap} an export copies; not copied")
            if _is_sparse(status):
                raise CopyRefused(
                    f"{source}: a sparse file ({size} bytes, {status.st_blocks * _BLOCK_BYTES} on disk); not copied"
                )
            with open(target, "wb") as out:
                # only the size seen when opened: a file growing meanwhile sends what it held then
                _copy_at_most(file, out, size)
        if source.name == SUMMARY_FILE and read_summary(target) is None:  # the copy: what is sent
            raise CopyRefused(f"{source}: not a summary the schema accepts; not copied")
    except CopyRefused:
        target.unlink(missing_ok=True)
        raise
    except NotARegularFile as error:
        raise CopyRefused(f"{error}; not copied") from None
    except OSError as error:
        target.unlink(missing_ok=True)
        raise CopyRefused(f"{source}: not copied ({error.strerror or error})") from None


def report(message: str) -> None:
    """One line on stderr about a file an export leaves out."""
    sys.stderr.write(f"trainwire export: {message}\n")


def _copy_at_most(source: IO[bytes], target: IO[bytes], size: int) -> None:
    left = size
    while left > 0:
        chunk = source.read(min(left, 1 << 20))
        if not chunk:
            return
        target.write(chunk)
        left -= len(chunk)


def _identity(status: os.stat_result) -> tuple[int, int]:
    return status.st_dev, status.st_ino


def _is_sparse(status: os.stat_result) -> bool:
    blocks: int | None = getattr(status, "st_blocks", None)  # Windows has none: no file is taken as sparse
    if blocks is None or status.st_size <= _SPARSE_FROM_BYTES or not stat.S_ISREG(status.st_mode):
        return False
    return blocks * _BLOCK_BYTES * _SPARSE_RATIO < status.st_size
