"""`GET /api/runs`'s query: which page of the runs list, filtered and sorted how. Whatever a
client sends, the query is bounded (a page of at most `MAX_PAGE_ROWS` rows, a filter of at
most `MAX_FILTER_CHARS`, at most `MAX_CONFIG_COLUMNS` config columns) and a value that is
not one is its default: a request never fails for its query.

- `offset`, `limit`: the rows from `offset` (0), at most `limit` (200, at most 500);
- `filter`: the rows with a cell holding this text, any case (the page's filter box);
- `sort`, `order`: the column (`started_at`, any column id of the page, `config:<key>`) and
  `asc` or `desc` (`started_at`, `desc`: the newest first);
- `config` (repeated): the config columns the page shows, which the filter matches too;
- `key`: only the runs of that key (a stream's directory: the rows a run's page takes its
  verdict from, whatever page of the list shows them).
"""

from __future__ import annotations

from collections.abc import Mapping

from trainwire.serve.row_text import COLUMN_IDS
from trainwire.serve.run_list import DEFAULT_PAGE_ROWS, MAX_PAGE_ROWS, Query

__all__ = ["MAX_CONFIG_COLUMNS", "MAX_FILTER_CHARS", "MAX_KEY_CHARS", "runs_query"]

MAX_FILTER_CHARS = 200
MAX_CONFIG_COLUMNS = 50
#: a key longer than this names no run (keys are paths under the served roots)
MAX_KEY_CHARS = 4096
_MAX_OFFSET = 10**9
_CONFIG = "config:"


def runs_query(params: Mapping[str, str]) -> Query:
    """The query of `params` (Starlette's `QueryParams`, or any mapping)."""
    getlist = getattr(params, "getlist", None)
    config_names = getlist("config") if getlist is not None else []
    config = tuple(dict.fromkeys(name for name in config_names if 0 < len(name) <= MAX_FILTER_CHARS))
    sort = params.get("sort", "started_at")
    if sort not in COLUMN_IDS and not (sort.startswith(_CONFIG) and len(sort) <= MAX_FILTER_CHARS + len(_CONFIG)):
        sort = "started_at"
    return Query(
        filter=params.get("filter", "")[:MAX_FILTER_CHARS],
        sort=sort,
        ascending=params.get("order") == "asc",
        config=config[:MAX_CONFIG_COLUMNS],
        offset=_number(params.get("offset"), 0, _MAX_OFFSET),
        limit=_number(params.get("limit"), DEFAULT_PAGE_ROWS, MAX_PAGE_ROWS, least=1),
        key=_key(params.get("key", "")),
    )


def _key(text: str) -> str:
    """A key to match rows by; one too long to be a key matches none."""
    return text if len(text) <= MAX_KEY_CHARS else "\0"


def _number(text: str | None, default: int, most: int, least: int = 0) -> int:
    if text is None or not text.isascii() or not text.isdigit() or len(text) > 12:
        return default
    return max(least, min(int(text), most))
