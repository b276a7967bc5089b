"""Every run under directories, read through the runs cache (`run_cache`): a directory whose
files did not change since the last listing costs its `stat` calls, not its reads.

The directories are walked as `contract.run_walk` walks them (subdirectories sorted, links
to directories not followed, trackers' copies of streams left out), one `scandir` each: a
stream's `runs/` is listed once, for the walk and for its signature (`run_signature`) alike.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from trainwire.contract.layout import JOURNALS_DIR, STREAM_FILE
from trainwire.contract.run_walk import Entries, WalkedDirectory, directory_entries, walk_run_directories
from trainwire.reader.catalog import RunRead, read_runs
from trainwire.reader.run_cache import RunsCache, cache_file
from trainwire.reader.run_signature import Signature, journal_names, run_signature

__all__ = ["CachedReads", "FoundStream", "list_runs", "streams_under"]


class CachedReads:
    """The reads of streams under one root, from its cache when their signature holds."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.cache = RunsCache(cache_file(root))

    def read(self, stream: Path, *, within: Path | None = None, signature: Signature | None = None) -> list[RunRead]:
        """The runs of `stream` (`read_runs`), `signature` its `run_signature` when the caller
        took it; OSError as `read_runs` raises it."""
        if signature is None:
            signature = run_signature(stream)  # before the reads: a change while reading shows next time
        reads = self.cache.get(stream, signature)
        if reads is None:
            reads = read_runs(stream, within=within)
            self.cache.put(stream, signature, reads)
        return reads


def list_runs(roots: list[Path], on_error: Callable[[Path, OSError], None]) -> Iterator[tuple[Path, list[RunRead]]]:
    """`(stream, its runs)` for every stream under `roots` in a stable order (a root that is
    a file is that stream); a stream that cannot be read goes to `on_error`. Each root's cache
    is saved once its walk ends."""
    for root in roots:
        if root.is_file():
            try:
                yield root, read_runs(root)
            except OSError as error:
                on_error(root, error)
            continue
        reads = CachedReads(root)
        for found in streams_under(root):
            try:
                yield found.stream, reads.read(found.stream, signature=found.signature())
            except OSError as error:
                on_error(found.stream, error)
        reads.cache.save()


@dataclass(frozen=True)
class FoundStream:
    """A stream the walk found, with what the walk listed of its run directory."""

    stream: Path
    #: the names of its journal directories
    journals: list[str]
    #: every name listed in the run directory, its `runs/` and each journal directory (as
    #: `runs/<run_id>/summary.json`): a file the signature takes that is not here is absent;
    #: None when the journals were not listed (a link in `runs/`'s place: each file is stat'ed)
    present: frozenset[str] | None

    def signature(self) -> Signature:
        return run_signature(self.stream, self.journals, self.present)


def streams_under(root: Path) -> Iterator[FoundStream]:
    """Every `progress.jsonl` below `root`, in the order `walk_run_directories` finds them,
    each with what the walk listed of its run directory: one `scandir` a directory, whether
    the walk or the signature needs it first."""
    listed: dict[str, Entries] = {}  # directories listed for a signature, not again by the walk
    for walked in walk_run_directories(root, listed):
        if STREAM_FILE in walked.files:
            yield _found(walked, listed)


def _found(walked: WalkedDirectory, listed: dict[str, Entries]) -> FoundStream:
    """The stream of the directory `walked` with its journals, each directory listed kept for the walk."""
    directory = walked.path
    stream = Path(directory, STREAM_FILE)
    present = {*walked.subdirectories, *walked.links, *walked.files}
    journals_dir = os.path.join(directory, JOURNALS_DIR)
    if JOURNALS_DIR in walked.links:  # read through the link, as the catalog reads it; never walked into
        return FoundStream(stream, journal_names(journals_dir), None)
    found = directory_entries(journals_dir) if JOURNALS_DIR in walked.subdirectories else None
    if found is None:
        return FoundStream(stream, [], frozenset(present))
    listed[journals_dir] = found
    journals = list(found[0])
    for journal in journals:
        path = os.path.join(journals_dir, journal)
        inside = directory_entries(path)
        if inside is None:  # a journal that cannot be listed may still be read: stat each file
            return FoundStream(stream, journals, None)
        listed[path] = inside
        present.update(f"{JOURNALS_DIR}/{journal}/{name}" for names in inside for name in names)
    return FoundStream(stream, journals, frozenset(present))
