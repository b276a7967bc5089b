"""The runs a server may serve: every stream found under its directories, by a stable key.

Only these files are ever served; a key is looked up, never joined to a path, so no
request can reach outside the directories.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from trainwire.reader.catalog import find_streams

__all__ = ["RunIndex"]


class RunIndex:
    """Streams under `roots` by key (the run directory relative to its root, `/`-separated);
    found again at most every `rescan_interval_s` when asked."""

    def __init__(self, roots: list[Path], rescan_interval_s: float = 2.0) -> None:
        self.roots = [root.resolve() for root in roots]
        self._rescan_interval_s = rescan_interval_s
        self._lock = threading.Lock()
        self._streams: dict[str, Path] = {}
        self._scanned_at = float("-inf")

    def streams(self) -> dict[str, Path]:
        """Key -> stream path, rescanned when the last scan is older than the interval."""
        with self._lock:
            if time.monotonic() - self._scanned_at >= self._rescan_interval_s:
                self._streams = self._scan()
                self._scanned_at = time.monotonic()
            return dict(self._streams)

    def stream(self, key: str) -> Path | None:
        found = self.streams().get(key)
        if found is None:  # a run that appeared since the last scan
            with self._lock:
                self._scanned_at = float("-inf")
            found = self.streams().get(key)
        return found

    def _scan(self) -> dict[str, Path]:
        found: dict[str, Path] = {}
        prefixes = _prefixes(self.roots)
        for root, prefix in zip(self.roots, prefixes):
            for stream in find_streams([root]):
                relative = stream.parent.relative_to(root).as_posix()
                key = "/".join(part for part in (prefix, "" if relative == "." else relative) if part) or "."
                found[key] = stream
        return found


def _prefixes(roots: list[Path]) -> list[str]:
    """No prefix for one root; the roots' names (made unique) for several."""
    if len(roots) == 1:
        return [""]
    prefixes: list[str] = []
    for root in roots:
        name = root.name or "root"
        candidate, number = name, 2
        while candidate in prefixes:
            candidate, number = f"{name}-{number}", number + 1
        prefixes.append(candidate)
    return prefixes
