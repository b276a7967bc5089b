"""The runs cache: what the files of each run directory said (`catalog.RunRead`) the last
time they were read, with their signature (`run_signature`), so a listing of ten thousand
runs reads again only the directories whose files changed.

It is a cache, never a source: an entry is used only when the directory's signature, taken
now, equals the one stored, and only after its values pass the checks the files' own would
(each summary through the schema, strictly; statuses, times, configs and notes of their
types). Anything else (a file that is not a regular one, over its cap, not JSON, of another
version, an entry that fails a check) is a miss, and the files are read. The file is kept in
the user's cache directory (`TRAINWIRE_CACHE_DIR`, else `$XDG_CACHE_HOME/trainwire`, else
`~/.cache/trainwire`), one per listed directory, never beside the runs; `TRAINWIRE_CACHE_DIR`
set empty turns it off. It is written atomically, and a cache that cannot be written is
left unwritten: listing never fails for it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic_core import from_json

from trainwire.contract.clock import parse_timestamp_us
from trainwire.contract.collector import collector_paused
from trainwire.contract.files import read_capped
from trainwire.contract.finite_json import finite
from trainwire.contract.limits import clip
from trainwire.journal.files import checked_summary
from trainwire.reader.cache_seal import seal, sealed_by_us
from trainwire.reader.catalog import RunRead, row_config
from trainwire.reader.run_signature import Signature

__all__ = ["CACHE_VERSION", "MAX_CACHE_BYTES", "RunsCache", "cache_file"]

logger = logging.getLogger("trainwire.files")

#: the form of the cache file and of what a read holds (3: a run that writes no more is read to its
#: last line); another version is not read
CACHE_VERSION = 3
#: a run's entry is a few KiB (its summary, flat config and notes); room for a hundred thousand
MAX_CACHE_BYTES = 512 << 20


def cache_file(root: Path) -> Path | None:
    """Where the cache of the runs under `root` is kept, or None when caching is off."""
    configured = os.environ.get("TRAINWIRE_CACHE_DIR")
    if configured == "":
        return None
    if configured is not None:
        directory = Path(configured)
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        directory = Path(base) / "trainwire"
    name = hashlib.sha256(os.path.realpath(root).encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return directory / f"runs-{name}.json"


class RunsCache:
    """The cache of one listed directory: `get` what is still valid, `put` what was read,
    `save` the entries met since it was loaded (the others are dropped)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._stored, self._sealed = _load(path) if path is not None else ({}, False)
        self._kept: dict[str, dict[str, Any]] = {}
        self._changed = False

    def get(self, stream: Path, signature: Signature) -> list[RunRead] | None:
        """The reads of `stream` stored with `signature`, checked; None on a miss."""
        key = str(stream)
        entry = self._stored.get(key)
        # a signature is lists, as JSON reads them back: any other shape is unequal, never converted
        if not isinstance(entry, dict) or entry.get("signature") != signature:
            return None
        reads = _reads(entry.get("reads"), stream, self._sealed)
        if reads is not None:
            self._kept[key] = entry
        return reads

    def put(self, stream: Path, signature: Signature, reads: list[RunRead]) -> None:
        self._kept[str(stream)] = {"signature": signature, "reads": [_stored_read(read) for read in reads]}
        self._changed = True

    def save(self) -> None:
        """Write the entries met (when any was read again or any stored one was not met)."""
        if self.path is None or (not self._changed and self._kept.keys() == self._stored.keys()):
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            body = json.dumps({"cache_version": CACHE_VERSION, "runs": self._kept}, separators=(",", ":"))
            _write_atomically(self.path, seal(self.path.parent, body.encode()))
        except (OSError, ValueError) as error:  # a cache that cannot be written is not one
            logger.debug("trainwire: the runs cache %s was not written (%s)", self.path, error)
        self._stored, self._changed = dict(self._kept), False


def _write_atomically(path: Path, data: bytes) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _load(path: Path) -> tuple[dict[str, Any], bool]:
    """The stored entries, and whether this user's trainwire sealed them (`cache_seal`)."""
    try:
        body, sealed = sealed_by_us(path.parent, read_capped(path, MAX_CACHE_BYTES))
        data = _parsed(body)
    except (OSError, ValueError):
        return {}, False
    if (
        not isinstance(data, dict)
        or data.get("cache_version") != CACHE_VERSION
        or not isinstance(data.get("runs"), dict)
    ):
        return {}, False
    runs: dict[str, Any] = data["runs"]
    return runs, sealed


def _parsed(body: bytes) -> Any:
    """The cache's JSON: ten thousand runs are a few hundred thousand objects, none in a cycle,
    so the collector is kept out while they are made (its passes would cost half the parse)."""
    with collector_paused():
        return from_json(body)


def _stored_read(read: RunRead) -> dict[str, Any]:
    return {
        "summary": read.summary,
        "status": read.status,
        "last_ts": read.last_ts,
        "config": read.config,
        "notes": read.notes,
    }


def _reads(stored: Any, stream: Path, sealed: bool) -> list[RunRead] | None:
    if not isinstance(stored, list) or not stored:
        return None
    reads = []
    for item in stored:
        read = _read(item, stream, sealed) if isinstance(item, dict) else None
        if read is None:
            return None
        reads.append(read)
    return reads


def _read(item: Mapping[str, Any], stream: Path, sealed: bool) -> RunRead | None:
    """A stored read held to the checks of the files it came from (those a sealed cache passed
    when it was written), or None."""
    summary, status, last_ts, config, notes = (
        item.get(name) for name in ("summary", "status", "last_ts", "config", "notes")
    )
    if not isinstance(summary, dict):
        return None
    if not sealed:  # the text the files' own check reads, then what `catalog.load_summary` makes of it
        summary = checked_summary(json.dumps(summary, ensure_ascii=False, separators=(",", ":")))
        summary = None if summary is None else finite(summary)
    if summary is None or status not in (None, summary["status"], "stale"):
        return None
    if not isinstance(config, dict) or not (notes is None or isinstance(notes, str)):
        return None
    if last_ts is not None:
        try:
            parse_timestamp_us(last_ts)
        except (TypeError, ValueError):
            return None
    # a sealed cache's config was made a row's when it was written; any other is made one here, bounded
    return RunRead(summary, status, last_ts, stream, config if sealed else row_config(config), clip(notes))
