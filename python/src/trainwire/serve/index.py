"""The runs a server may serve: every stream found under its directories, by a stable key.

Only these files are ever served; a key is looked up, never joined to a path, so no
request can reach outside the directories. A stream is indexed only when it is a regular
file whose resolved path lies inside its root: a link named `progress.jsonl` leading
elsewhere, a FIFO, a device or a socket is skipped, with one log line each. A tracker's copy
of a stream (MLflow's artifacts, `contract.run_walk`) is not a run and is not walked into.

The tree is walked by a background thread at a bounded rate, never by a request: a request
reads the last snapshot, so a client asking for unknown keys costs a dictionary lookup.
"""

from __future__ import annotations

import logging
import os
import stat
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from trainwire.contract.files import inside
from trainwire.contract.layout import STREAM_FILE
from trainwire.contract.run_walk import walk_run_directories

__all__ = ["IndexedStream", "RunIndex"]

logger = logging.getLogger("trainwire.serve")

#: the share of one core walking may take: a walk slower than this share of the interval
#: stretches the wait before the next one
_MAX_SCAN_SHARE = 0.2


@dataclass(frozen=True)
class IndexedStream:
    """A stream the server may read: its resolved path and the root it must stay inside."""

    path: Path
    root: Path


class RunIndex:
    """Streams under `roots` by key (the run directory relative to its root, `/`-separated;
    prefixed by the root's name when there are several roots; the root's name for a stream
    in the root itself). The first stream found keeps a key a subdirectory also makes."""

    def __init__(self, roots: list[Path], rescan_interval_s: float = 2.0) -> None:
        self.roots = [root.resolve() for root in roots]
        #: what the page shows for each root: its name, never its absolute path
        self.root_names = _prefixes(self.roots)
        # no prefix in the keys for one root
        self._prefixes = self.root_names if len(self.roots) > 1 else [""] * len(self.roots)
        self._rescan_interval_s = rescan_interval_s
        self._streams: dict[str, IndexedStream] = {}
        self._skipped: set[Path] = set()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        #: how many walks have completed (a test reads it to wait for a fresh snapshot)
        self.scans = 0

    def streams(self) -> dict[str, IndexedStream]:
        """Key -> stream, as of the last walk (no file system work)."""
        return self._streams

    def stream(self, key: str) -> IndexedStream | None:
        return self._streams.get(key)

    def start(self) -> RunIndex:
        """Walk once now, then again in a background thread until `stop()`."""
        self.refresh()
        self._thread = threading.Thread(target=self._keep_fresh, name="trainwire-serve-index", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join()

    def refresh(self) -> None:
        """Walk every root once and replace the snapshot."""
        found: dict[str, IndexedStream] = {}
        for root, prefix, name in zip(self.roots, self._prefixes, self.root_names, strict=False):
            for stream in self._walk(root):
                relative = stream.parent.relative_to(root).as_posix()
                # a stream in the root itself (`trainwire serve out/` on one run) is keyed by the
                # root's name: `.` would make `runs/./progress.jsonl`, which URLs rewrite
                key = "/".join(part for part in (prefix, "" if relative == "." else relative) if part) or name
                found.setdefault(key, IndexedStream(Path(os.path.realpath(stream)), root))
        self._streams = found  # one assignment: a request sees the old snapshot or the new one
        self.scans += 1

    def _keep_fresh(self) -> None:
        wait = self._rescan_interval_s
        while not self._stopping.wait(wait):
            started = time.monotonic()
            try:
                self.refresh()
            except Exception:  # a walk must never end the thread: the next one tries again
                logger.exception("trainwire serve: walking the served directories failed")
            wait = max(self._rescan_interval_s, (time.monotonic() - started) / _MAX_SCAN_SHARE)

    def _walk(self, root: Path) -> list[Path]:
        streams = []
        for walked in walk_run_directories(root):
            here = Path(walked.path)
            for name in walked.links:
                if not inside(here / name, root):
                    self._skip(here / name, root, "a link leading outside the served directory (not followed)")
            if STREAM_FILE in walked.files:
                candidate = here / STREAM_FILE
                problem = _problem(candidate, root)
                if problem is None:
                    streams.append(candidate)
                else:
                    self._skip(candidate, root, problem)
        return streams

    def _skip(self, path: Path, root: Path, why: str) -> None:
        if path not in self._skipped:  # one line per path, not one per walk
            self._skipped.add(path)
            logger.warning("trainwire serve: skipped %s: %s", path.relative_to(root).as_posix(), why)


def _problem(candidate: Path, root: Path) -> str | None:
    """Why `candidate` may not be served, or None."""
    if not inside(candidate, root):
        return "a link leading outside the served directory"
    try:
        mode = os.stat(candidate).st_mode
    except OSError as error:
        return f"cannot be read ({error.strerror or error})"
    if not stat.S_ISREG(mode):
        kind = (
            "a FIFO"
            if stat.S_ISFIFO(mode)
            else "a socket"
            if stat.S_ISSOCK(mode)
            else "a device"
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "not a regular file"
        )
        return kind
    return None


def _prefixes(roots: list[Path]) -> list[str]:
    """The roots' names, made unique."""
    prefixes: list[str] = []
    for root in roots:
        name = root.name or "root"
        candidate, number = name, 2
        while candidate in prefixes:
            candidate, number = f"{name}-{number}", number + 1
        prefixes.append(candidate)
    return prefixes
