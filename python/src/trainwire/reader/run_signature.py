"""What a run directory's rows are read from, as `stat` sees it: a reader that kept the rows
(the server's runs list, the runs cache) reads them again only when this changed.

The signature holds, for each file a row reads (the stream, every journal's summary, config,
notes and step file, a 0.1 journal's summary and notes beside the stream), its size, device,
inode, and modification and change times: an append, a replacement (`os.replace`, a link,
a FIFO put in its place) or a removal changes it. The change time cannot be set back by
whoever writes the file, so a rewrite that restores the old modification time still shows.
"""

from __future__ import annotations

import os
from pathlib import Path

from trainwire.contract.layout import CONFIG_FILE, JOURNALS_DIR, NOTES_FILE, STEPS_FILE, SUMMARY_FILE

__all__ = ["Signature", "run_signature"]

#: per file: its name relative to the run directory and (size, device, inode, mtime, ctime), or None when absent
Signature = tuple[tuple[str, tuple[int, int, int, int, int] | None], ...]

_JOURNAL_FILES = (SUMMARY_FILE, CONFIG_FILE, NOTES_FILE, STEPS_FILE)


def run_signature(stream: Path) -> Signature:
    """The signature of `stream`'s run directory (stat calls only, no file opened)."""
    directory = os.fspath(stream.parent)
    names = [stream.name, SUMMARY_FILE, NOTES_FILE]
    try:
        journals = sorted(entry.name for entry in os.scandir(os.path.join(directory, JOURNALS_DIR)) if entry.is_dir())
    except OSError:
        journals = []
    names += [f"{JOURNALS_DIR}/{journal}/{name}" for journal in journals for name in _JOURNAL_FILES]
    return tuple((name, _stat(os.path.join(directory, name))) for name in names)


def _stat(path: str) -> tuple[int, int, int, int, int] | None:
    try:
        found = os.stat(path)
    except (OSError, ValueError):
        return None
    return (found.st_size, found.st_dev, found.st_ino, found.st_mtime_ns, found.st_ctime_ns)
