"""The dashboard's runs list a page at a time: the server filters on the text the cells show,
sorts by a column with a directory's runs together, pages, and answers while it still reads
(`trainwire.serve.run_list`, `runs_query`)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from starlette.datastructures import QueryParams
from support.serve_process import make_run, serve

from trainwire.reader import run_listing
from trainwire.serve.index import RunIndex
from trainwire.serve.run_list import MAX_PAGE_ROWS, Listing, Query, RunList
from trainwire.serve.runs_query import runs_query


def _row(key: str, run_id: str = "r", **fields: Any) -> dict[str, Any]:
    return {
        "key": key,
        "run_id": run_id,
        "name": None,
        "tags": [],
        "status": "succeeded",
        "step": None,
        "total_steps": None,
        "duration_s": None,
        "last_loss": None,
        "best_loss": None,
        "git_sha": None,
        "started_at": None,
        "config": {},
        "notes": None,
        **fields,
    }


def _keys(listing: Listing, **query: Any) -> list[str]:
    return [row["key"] for row in listing.page(Query(**query))["rows"]]


FILTERED = Listing.of(
    [
        _row("alpha", name="Alpha Run", notes="resumed after preemption"),
        _row("beta", tags=["baseline", "fp16"], config={"model.name": "wide-net"}),
        _row("gamma", status="stale", git_sha="0123456789abcdef"),
        _row("delta", last_loss=0.123456, started_at="2026-12-04T10:00:00.5Z", duration_s=3725.0),
    ]
)


def test_the_filter_matches_the_shown_text_of_a_cell_in_any_case() -> None:
    assert _keys(FILTERED, filter="fp16") == ["beta"]
    assert _keys(FILTERED, filter="  alpha run ") == ["alpha"]
    assert _keys(FILTERED, filter="PREEMPTION") == ["alpha"]
    assert _keys(FILTERED, filter="stale") == ["gamma"]
    assert sorted(_keys(FILTERED, filter="   ")) == ["alpha", "beta", "delta", "gamma"]
    # numbers, starts and durations as the cells show them: four digits, UTC to the second, H:MM:SS
    assert _keys(FILTERED, filter="0.1235") == ["delta"]
    assert _keys(FILTERED, filter="2026-12-04 10:00:00") == ["delta"]
    assert _keys(FILTERED, filter="1:02:05") == ["delta"]


def test_the_filter_matches_only_what_is_shown() -> None:
    assert _keys(FILTERED, filter="abcdef") == []  # the hidden part of a git sha
    assert _keys(FILTERED, filter="0.123456") == []  # digits the cell does not show
    assert _keys(FILTERED, filter="wide-net") == []  # a config column not picked
    assert _keys(FILTERED, filter="wide-net", config=("model.name",)) == ["beta"]
    assert _keys(FILTERED, filter="succeeded\nr") == []  # across two cells


ORDERED = Listing.of(
    [
        _row("old", started_at="2026-12-01T10:00:00Z", best_loss=0.5),
        _row("none"),
        _row("new", started_at="2026-12-03T10:00:00Z", best_loss=0.1),
        _row("whole", started_at="2026-12-01T10:00:05Z"),
        _row("later", started_at="2026-12-01T10:00:05.5Z"),
    ]
)


def test_the_order_is_newest_first_with_rows_without_a_value_last_both_ways() -> None:
    assert _keys(ORDERED) == ["new", "later", "whole", "old", "none"]  # starts by their instant, not their text
    assert _keys(ORDERED, sort="best_loss", ascending=True)[:2] == ["new", "old"]
    assert _keys(ORDERED, sort="best_loss", ascending=False)[:2] == ["old", "new"]
    assert _keys(ORDERED, sort="best_loss", ascending=True)[-1] in {"none", "whole", "later"}
    assert _keys(ORDERED, sort="config:gone", ascending=True) == ["later", "new", "none", "old", "whole"]


def test_a_directorys_runs_stay_together_in_stream_order_under_the_directory() -> None:
    listing = Listing.of(
        [
            _row("a", "a1", started_at="2026-12-01T10:00:00Z"),
            _row("a", "a2", started_at="2026-12-05T10:00:00Z"),
            _row("b", "b1", started_at="2026-12-03T10:00:00Z"),
        ]
    )
    ordered = [row["run_id"] for row in listing.page(Query())["rows"]]
    assert ordered == ["a1", "a2", "b1"]  # a's newest run is the newest of all: a first, its runs in order
    ascending = [row["run_id"] for row in listing.page(Query(ascending=True))["rows"]]
    assert ascending == ["a1", "a2", "b1"]  # a's oldest run is the oldest too
    assert [row["run_id"] for row in listing.page(Query(filter="a2"))["rows"]] == ["a2"]


def test_pages_hold_at_most_their_limit_and_say_how_many_match() -> None:
    listing = Listing.of([_row(f"run-{number:04d}", config={"lr": number}) for number in range(1234)])
    first = listing.page(Query(sort="key", ascending=True, limit=MAX_PAGE_ROWS))
    assert len(first["rows"]) == MAX_PAGE_ROWS and first["total"] == 1234 and first["runs"] == 1234
    assert first["config_keys"] == ["lr"] and first["scanning"] is False
    last = listing.page(Query(sort="key", ascending=True, offset=1000, limit=MAX_PAGE_ROWS))
    assert [row["key"] for row in last["rows"]] == [f"run-{number:04d}" for number in range(1000, 1234)]
    assert listing.page(Query(offset=99_999))["rows"] == []
    assert listing.page(Query(filter="run-01")) == listing.page(Query(filter="run-01"))


def test_any_query_is_bounded_and_a_value_that_is_not_one_is_its_default() -> None:
    query = runs_query(QueryParams("offset=-5&limit=100000&sort=__proto__&order=up&filter=" + "x" * 5000))
    assert query == Query(filter="x" * 200, sort="started_at", ascending=False, offset=0, limit=MAX_PAGE_ROWS)
    query = runs_query(QueryParams("offset=40&limit=0&sort=config:lr&order=asc&config=lr&config=lr&config="))
    assert query == Query(sort="config:lr", ascending=True, config=("lr",), offset=40, limit=1)
    assert runs_query(QueryParams("limit=1e3&offset=٣")) == Query()


def test_the_list_answers_what_it_read_so_far_while_a_run_holds_its_first_pass(tmp_path: Path, monkeypatch) -> None:
    for name in ("a", "b", "c"):
        make_run(tmp_path / name)
    held, reached = threading.Event(), threading.Event()
    read = run_listing.CachedReads.read

    def slow_b(self: run_listing.CachedReads, stream: Path, **kwargs: Any) -> Any:
        if stream.parent.name == "b":  # a directory on a disk that takes its time
            reached.set()
            held.wait(30)
        return read(self, stream, **kwargs)

    monkeypatch.setattr(run_listing.CachedReads, "read", slow_b)
    index = RunIndex([tmp_path]).start()
    runs = RunList(index).start()
    try:
        assert reached.wait(30)
        deadline = time.monotonic() + 30
        while not runs.listing().rows and time.monotonic() < deadline:
            time.sleep(0.01)  # polling for a condition: the rows read before b are published
        page = runs.listing().page(Query(sort="key", ascending=True))
        assert page["scanning"] is True and [row["key"] for row in page["rows"]] == ["a"]
        held.set()
        while runs.passes < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        page = runs.listing().page(Query(sort="key", ascending=True))
        assert page["scanning"] is False and [row["key"] for row in page["rows"]] == ["a", "b", "c"]
    finally:
        held.set()
        runs.stop()
        index.stop()


def test_a_first_list_of_thousands_of_runs_is_answered_at_once(tmp_path: Path) -> None:
    """Reading 2,000 runs takes longer than the deadline: every client is answered at once, with
    the runs read so far, and then with all of them (the whole list was one pass under the
    deadline: 503 to every client waiting on the first list)."""
    template = tmp_path / "template"
    make_run(template)
    files = {path.relative_to(template): path.read_bytes() for path in template.rglob("*") if path.is_file()}
    for number in range(2000):
        for relative, data in files.items():
            target = tmp_path / "runs" / f"{number // 100:02d}" / f"run-{number:04d}" / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    with serve(str(tmp_path / "runs"), "--deadline", "0.5") as server:
        statuses = []
        threads = [
            threading.Thread(target=lambda: statuses.append(server.request("/api/runs?limit=50")[0])) for _ in range(8)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert statuses == [200] * 8
        page = server.runs_page("limit=50", timeout_s=120)
    assert page["scanning"] is False and page["total"] == 2000 and len(page["rows"]) == 50


def test_a_key_asks_for_the_runs_of_one_directory_whatever_the_filter_and_page() -> None:
    listing = Listing.of([_row("a", "r1"), _row("b", "r2"), _row("a", "r3"), _row("ab", "r4")])
    page = listing.page(runs_query(QueryParams("key=a&filter=r3")))
    assert [row["run_id"] for row in page["rows"]] == ["r3"]
    assert sorted(row["run_id"] for row in listing.page(runs_query(QueryParams("key=a")))["rows"]) == ["r1", "r3"]
    assert listing.page(runs_query(QueryParams("key=" + "a" * 5000)))["rows"] == []  # too long to be a key
    assert len(listing.page(runs_query(QueryParams("key=")))["rows"]) == 4  # no key: every run
