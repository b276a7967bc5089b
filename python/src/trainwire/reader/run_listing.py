"""Every run under directories, read through the runs cache (`run_cache`): a directory whose
files did not change since the last listing costs its `stat` calls, not its reads."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from trainwire.contract.layout import STREAM_FILE
from trainwire.contract.run_walk import walk_run_directories
from trainwire.reader.catalog import RunRead, read_runs
from trainwire.reader.run_cache import RunsCache, cache_file
from trainwire.reader.run_signature import Signature, run_signature

__all__ = ["CachedReads", "list_runs"]


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
        for directory, _subdirectories, files in walk_run_directories(root):
            if STREAM_FILE in files:
                stream = Path(directory) / STREAM_FILE
                try:
                    yield stream, reads.read(stream)
                except OSError as error:
                    on_error(stream, error)
        reads.cache.save()
