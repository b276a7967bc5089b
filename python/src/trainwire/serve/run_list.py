"""The dashboard's runs list: every run of every stream the index found (earlier runs of a
directory too), kept in memory by one background thread and answered a page at a time.

The thread goes over the streams again and again: a directory whose files did not change
(`run_signature`: `stat` calls only) keeps what was read of it, so after the first pass a
pass costs its `stat` calls plus the directories that changed; the first pass starts from
the runs cache (`reader.run_cache`), checked against the files. There is one pass at a
time, in that thread: a request never reads a file, never waits for a pass, and never waits
for the first: until the first pass has been over every stream, the answer holds the runs
read so far and says `"scanning": true`.

A request filters and sorts the rows of the last listing (`Listing.page`): the filter on the
text of the row's cells, the order by a column (`serve.row_text`, the page's own), the runs
of a directory together under it in the order of its stream, as `trainwire runs` groups
them. The answers of a listing are kept by query, so fifty tabs asking for the same page
cost one.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainwire.contract.clock import format_ts, parse_timestamp_us
from trainwire.contract.finite_json import finite_json
from trainwire.reader.catalog import RunRead
from trainwire.reader.run_listing import CachedReads
from trainwire.reader.run_signature import Signature, run_signature
from trainwire.serve.index import RunIndex
from trainwire.serve.row_text import cell_texts, config_cell, sort_value

__all__ = ["DEFAULT_PAGE_ROWS", "MAX_PAGE_ROWS", "Listing", "Query", "RunList"]

logger = logging.getLogger("trainwire.serve")

#: the most rows a page holds (and what it holds unless asked for fewer)
MAX_PAGE_ROWS = 500
DEFAULT_PAGE_ROWS = 200
#: how often a listing is made again while nothing changed (running runs turn stale, their durations grow)
_RELIST_S = 1.0
#: during a pass, what was read so far is published at least this often
_PUBLISH_S = 0.25
#: a pass's share of one core, as the index's walk: a slow pass stretches the wait before the next
_MAX_PASS_SHARE = 0.2
#: the runs cache is written after the first pass, then at most this often
_SAVE_CACHE_S = 60.0
#: a catalog row's absolute paths: the page names a run by its key, never by where it lies
_PATH_FIELDS = frozenset({"path", "directory"})
#: the config keys the page may offer as columns
_MAX_CONFIG_KEYS = 2000
_QUERIES_KEPT = 64


@dataclass(frozen=True)
class Query:
    """What a page of the runs list asks for."""

    filter: str = ""
    sort: str = "started_at"
    ascending: bool = False
    config: tuple[str, ...] = ()
    offset: int = 0
    limit: int = DEFAULT_PAGE_ROWS
    #: only the runs of this key (one stream's directory: a run's page asks for its verdict)
    key: str = ""


@dataclass
class _Directory:
    """What was read of one stream's directory, and the files' signature it was read at."""

    signature: Signature
    reads: list[RunRead]
    #: each read's row with its cells' text, and when it was made (None: it does not change with time)
    rows: list[tuple[dict[str, Any], str, float | None] | None] = field(default_factory=list)


class Listing:
    """The rows at one moment, with their cell texts, and the pages asked of them."""

    def __init__(self, rows: list[tuple[dict[str, Any], str]], scanning: bool) -> None:
        self.rows = [row for row, _text in rows]
        self.scanning = scanning
        #: each row's cells, lower case, a line each: what the filter looks in
        self._texts = [text for _row, text in rows]
        self._answers: dict[Query, tuple[dict[str, Any], bytes]] = {}
        self._lock = threading.Lock()
        self._config_keys: list[str] | None = None

    @classmethod
    def of(cls, rows: list[dict[str, Any]], scanning: bool = False) -> Listing:
        """A listing of page rows (each with its `key`), their texts made here."""
        return cls([(row, row_filter_text(row)) for row in rows], scanning)

    def page(self, query: Query) -> dict[str, Any]:
        """The answer of `/api/runs` for `query`."""
        return self._answer(query)[0]

    def page_json(self, query: Query) -> bytes:
        """The same answer as JSON, made once per query of the listing however many ask."""
        return self._answer(query)[1]

    def _answer(self, query: Query) -> tuple[dict[str, Any], bytes]:
        with self._lock:
            answer = self._answers.get(query)
        if answer is None:
            page = self._page(query)
            # as JSON the browser's `JSON.parse` reads (the rows are read so: this holds
            # whatever else a row comes to carry)
            answer = (page, finite_json(page).encode("utf-8"))
            with self._lock:
                if len(self._answers) >= _QUERIES_KEPT:
                    self._answers.pop(next(iter(self._answers)))
                self._answers[query] = answer
        return answer

    def _page(self, query: Query) -> dict[str, Any]:
        matching = [index for index in self._order(query.sort, query.ascending) if self._matches(index, query)]
        offset = min(query.offset, len(matching))
        return {
            "rows": [self.rows[index] for index in matching[offset : offset + query.limit]],
            "total": len(matching),
            "offset": offset,
            "limit": query.limit,
            "runs": len(self.rows),
            "scanning": self.scanning,
            "config_keys": self.config_keys(),
        }

    def _matches(self, index: int, query: Query) -> bool:
        if query.key and self.rows[index]["key"] != query.key:
            return False
        words = query.filter.strip().lower()
        if not words:
            return True
        if words in self._texts[index] and "\n" not in words:
            return True
        row = self.rows[index]
        return any(words in config_cell(row, name).lower() for name in query.config)

    def _order(self, column: str, ascending: bool) -> list[int]:
        """The rows' indices: directories by their first run in this order, a directory's runs in stream order."""
        groups: dict[str, list[int]] = {}
        for index, row in enumerate(self.rows):
            groups.setdefault(row["key"], []).append(index)
        ranked = []
        for key, members in sorted(groups.items()):  # ties (and rows without a value) by folder
            values = [_comparable(sort_value(self.rows[index], column)) for index in members]
            present = [value for value in values if value is not None]
            best = (min(present) if ascending else max(present)) if present else None
            ranked.append((best, key, members))
        with_value = [(best, members) for best, _key, members in ranked if best is not None]
        with_value.sort(key=lambda item: item[0], reverse=not ascending)
        without = [members for best, _key, members in ranked if best is None]
        return [index for members in [*(members for _best, members in with_value), *without] for index in members]

    def config_keys(self) -> list[str]:
        if self._config_keys is None:
            keys = {name for row in self.rows for name in row.get("config") or {}}
            self._config_keys = sorted(keys)[:_MAX_CONFIG_KEYS]
        return self._config_keys


def row_filter_text(row: Mapping[str, Any]) -> str:
    """What the filter looks in: the row's cells, lower case, a line each."""
    return "\n".join(cell_texts(row)).lower()


def _comparable(value: Any) -> tuple[int, Any] | None:
    """A sort value all of a column's values compare with: numbers before texts."""
    if value is None:
        return None
    return (1, value) if isinstance(value, str) else (0, value)


class RunList:
    """Every run `index` found, read by one background thread (`start`), listed at once."""

    def __init__(self, index: RunIndex, interval_s: float = 1.0) -> None:
        self._index = index
        self._interval_s = interval_s
        self._directories: dict[str, _Directory] = {}
        self._reads = {root: CachedReads(root) for root in index.roots}
        self._listing = Listing([], scanning=True)
        self._listed_at = float("-inf")
        self._changed = True
        self._scanning = True
        self._cache_saved_at: float | None = None
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        #: how many passes have ended (a test waits on it)
        self.passes = 0

    def listing(self) -> Listing:
        """The last listing (no file system work)."""
        return self._listing

    def start(self) -> RunList:
        self._thread = threading.Thread(target=self._keep_fresh, name="trainwire-serve-runs", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join()

    def _keep_fresh(self) -> None:
        wait = 0.0
        while not self._stopping.wait(wait):
            started = time.monotonic()
            try:
                self.run_pass()
            except Exception:  # a pass must never end the thread: the next one tries again
                logger.exception("trainwire serve: reading the runs failed")
            wait = max(self._interval_s, (time.monotonic() - started) / _MAX_PASS_SHARE - (time.monotonic() - started))

    def run_pass(self) -> None:
        """Go over every stream once: read the directories whose files changed, then list."""
        streams = self._index.streams()
        for key in [key for key in self._directories if key not in streams]:
            del self._directories[key]
            self._changed = True
        for key, found in sorted(streams.items()):
            if self._stopping.is_set():
                return
            signature = run_signature(found.path)
            held = self._directories.get(key)
            if held is None or held.signature != signature:
                self._read(key, found.path, found.root, signature)
            if time.monotonic() - self._listed_at >= _PUBLISH_S and self._scanning:
                self._list()
        self._scanning = False
        self._list()
        self.passes += 1
        self._save_cache()

    def _read(self, key: str, stream: Path, root: Path, signature: Signature) -> None:
        try:
            reads = self._reads[root].read(stream, within=root, signature=signature)
        except OSError:
            reads = []  # removed, or replaced by something that may not be read, since the walk
        except Exception:  # a hostile file must cost its own rows only
            logger.exception("trainwire serve: cannot read the run %s", key)
            reads = []
        self._directories[key] = _Directory(signature, reads, [None] * len(reads))
        self._changed = True

    def _list(self) -> None:
        """A new listing when anything changed, or a second passed (running runs move on)."""
        now = time.monotonic()
        if not self._changed and now - self._listed_at < _RELIST_S:
            return
        now_us = parse_timestamp_us(format_ts(time.time()))
        rows = []
        for key, directory in sorted(self._directories.items()):
            for position, read in enumerate(directory.reads):
                held = directory.rows[position]
                # a row that moves with time is made again at most once a second, and not while the
                # first pass publishes what it read so far (that would make every row again and again)
                if held is None or (not self._scanning and held[2] is not None and now - held[2] >= _RELIST_S):
                    row = _page_row(key, read.row(now_us))
                    held = (row, row_filter_text(row), None if read.timeless else now)
                    directory.rows[position] = held
                rows.append((held[0], held[1]))
        listing = Listing(rows, scanning=self._scanning)
        listing.page_json(Query())  # the page every tab opens on, made here rather than by its first request
        self._listing = listing  # one assignment: a request sees the old listing or the new one
        self._listed_at, self._changed = now, False

    def _save_cache(self) -> None:
        now = time.monotonic()
        if self._cache_saved_at is not None and now - self._cache_saved_at < _SAVE_CACHE_S:
            return
        for reads in self._reads.values():
            reads.cache.save()
        self._cache_saved_at = now


def _page_row(key: str, row: Mapping[str, Any]) -> dict[str, Any]:
    return {"key": key, **{name: value for name, value in row.items() if name not in _PATH_FIELDS}}
