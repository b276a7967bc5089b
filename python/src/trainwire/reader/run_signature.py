"""What a run directory's rows are read from, as `stat` sees it: a reader that kept the rows
(the server's runs list, the runs cache) reads them again only when this changed.

The signature holds, for each file a row reads (the stream, every journal's summary, config,
notes and step file, a 0.1 journal's summary and notes beside the stream), its size, device,
inode, and modification and change times: an append, a replacement (`os.replace`, a link,
a FIFO put in its place) or a removal changes it. The change time cannot be set back by
whoever writes the file, so a rewrite that restores the old modification time still shows.

It is made of lists, as JSON gives them back: a signature read from the runs cache compares
equal to one taken now without being converted.
"""

from __future__ import annotations

import os
from collections.abc import Container, Iterable
from pathlib import Path
from typing import Any

from trainwire.contract.layout import CONFIG_FILE, JOURNALS_DIR, NOTES_FILE, STEPS_FILE, SUMMARY_FILE

__all__ = ["Signature", "journal_names", "run_signature"]

#: per file: `[name relative to the run directory, size, device, inode, mtime_ns, ctime_ns]`,
#: or `[name]` when it is absent
Signature = list[list[Any]]

_JOURNAL_FILES = (SUMMARY_FILE, CONFIG_FILE, NOTES_FILE, STEPS_FILE)


def run_signature(
    stream: Path | str, journals: Iterable[str] | None = None, present: Container[str] | None = None
) -> Signature:
    """The signature of `stream`'s run directory (stat calls only, no file opened).

    A caller that listed the directories (`run_listing.streams_under`) gives `journals`, the
    names of the journal directories, and `present`, every name found (relative to the run
    directory, as in the signature): a file not among them is absent without a `stat`."""
    directory = os.path.dirname(os.fspath(stream)) or "."
    if journals is None:
        journals = journal_names(os.path.join(directory, JOURNALS_DIR))
    names = [os.path.basename(os.fspath(stream)), SUMMARY_FILE, NOTES_FILE]
    names += [f"{JOURNALS_DIR}/{journal}/{name}" for journal in sorted(journals) for name in _JOURNAL_FILES]
    if present is None:
        return [_stat(directory, name) for name in names]
    return [_stat(directory, name) if name in present else [name] for name in names]


def journal_names(journals_dir: str) -> list[str]:
    """The directories in a stream's `runs/` (links to one are not journals: never read)."""
    try:
        with os.scandir(journals_dir) as entries:
            return [entry.name for entry in entries if entry.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def _stat(directory: str, name: str) -> list[Any]:
    try:
        found = os.stat(f"{directory}/{name}")
    except (OSError, ValueError):
        return [name]
    return [name, found.st_size, found.st_dev, found.st_ino, found.st_mtime_ns, found.st_ctime_ns]
