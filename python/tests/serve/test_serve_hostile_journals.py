"""`trainwire serve` against journal files an outsider wrote into a served directory, as a real
process: files of gigabytes (sparse, so they take no disk), summaries and snapshots of the wrong
types or nested past any parser, and a summary linked out of the directory. The runs list
goes on listing every run, the server stays small, and the opening and stop answer 404 or
409, never 500."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from support.serve_process import Server, make_run, serve

from trainwire.contract.layout import run_journal_dir

GIB = 1 << 30
#: the server's peak resident memory allowed: a whole-file read of a 1 GiB journal file is more
MEMORY_BOUND_BYTES = 400 << 20
#: deeper than any JSON parser recurses (Python's `json` raises RecursionError)
DEEP = 100_000


def _journal(directory: Path) -> Path:
    (journal,) = (directory / "runs").iterdir()
    return journal


def _edit_json(path: Path, change: Callable[[dict[str, Any]], Any]) -> None:
    value = json.loads(path.read_text())
    changed = change(value)
    path.write_text(changed if isinstance(changed, str) else json.dumps(value))


def _peak_memory(server: Server) -> int:
    """The server process's peak resident memory (VmHWM), in bytes."""
    for line in Path(f"/proc/{server.process.pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM in /proc/<pid>/status")


def _rows(server: Server) -> dict[str, dict[str, Any]]:
    return {row["key"]: row for row in server.rows()}


def _cap_lines(server: Server) -> list[str]:
    return [line for line in server.output.splitlines() if "read as absent" in line]


def test_a_sparse_1gb_summary_config_notes_or_snapshot_counts_as_absent(tmp_path: Path) -> None:
    served = tmp_path / "runs"
    good = make_run(served / "good")
    for name in ("summary", "config", "notes", "snapshot"):
        make_run(served / name)
    files = {
        "summary": _journal(served / "summary") / "summary.json",
        "config": _journal(served / "config") / "config.json",
        "notes": _journal(served / "notes") / "notes.md",
        "snapshot": _journal(served / "snapshot") / "series.json",
    }
    for path in files.values():
        os.truncate(path, GIB)  # its own bytes, then a gigabyte of zeros
    with serve(str(served)) as server:
        for _poll in range(3):
            rows = _rows(server)
            assert sorted(rows) == ["config", "good", "notes", "snapshot", "summary"]
            assert rows["good"]["run_id"] == good and rows["good"]["status"] == "succeeded"
            assert rows["summary"]["status"] == "succeeded"  # read from the stream instead
            assert rows["config"]["config"] == {} and rows["notes"]["notes"] is None
            for key in ("summary", "snapshot"):
                assert server.request(f"/api/runs/{key}/opening")[0] == 404
            assert server.request("/api/runs/good/opening")[0] == 200
        peak = _peak_memory(server)
    assert peak < MEMORY_BOUND_BYTES, f"the server reached {peak >> 20} MiB"
    lines = _cap_lines(server)
    assert sorted(lines) == sorted(
        f"trainwire: {path} holds {GIB} bytes, over the {1 << 25 if name == 'snapshot' else 1 << 20} bytes it may hold: read as absent"
        for name, path in files.items()
    )  # one line a file, however often it is read


def _hostile_summaries() -> dict[str, Callable[[dict[str, Any]], Any]]:
    """Summaries a valid one becomes in an outsider's hands, by the run key they are served at."""
    return {
        "git-sha": lambda summary: summary.update(git_sha=12345),
        "status": lambda summary: summary.update(status=123),
        "run-id": lambda summary: summary.update(run_id=["x"]),
        "last": lambda summary: summary.update(last=[1, 2]),
        "earlier-runs": lambda summary: summary.update(earlier_runs=[[["x"] * 1000] * 100]),
        "earlier-count": lambda summary: summary.update(earlier_runs=5),
        "deep": lambda summary: json.dumps(summary)[:-1] + ', "seeds": ' + "[" * DEEP + "]" * DEEP + "}",
        "not-an-object": lambda summary: "[" * DEEP + "]" * DEEP,
    }


def test_a_summary_with_wrong_types_is_dropped_and_other_runs_listed(tmp_path: Path) -> None:
    served = tmp_path / "runs"
    make_run(served / "good")
    hostile = _hostile_summaries()
    for key, change in hostile.items():
        run_id = make_run(served / key)
        _edit_json(run_journal_dir(served / key, run_id) / "summary.json", change)
    with serve(str(served)) as server:
        rows = _rows(server)
    assert sorted(rows) == sorted(["good", *hostile])  # every run listed, each from its stream
    for key, row in rows.items():
        assert row["status"] == "succeeded" and isinstance(row["run_id"], str), key
        assert row["git_sha"] is None and isinstance(row["earlier_runs"], list), key
        assert isinstance(row["last_loss"], float) and row["step"] == 5, key


def _hostile_snapshots() -> dict[str, Callable[[dict[str, Any]], Any]]:
    """Snapshots of the wrong shape in one part, by the run key they are served at."""

    def first_series(snapshot: dict[str, Any]) -> dict[str, Any]:
        series: dict[str, Any] = snapshot["store"]["runs"][0]["series"]["loss"]
        return series

    return {
        "bucket": lambda snapshot: first_series(snapshot)["buckets"][0].__setitem__(2, "x"),
        "bucket-size": lambda snapshot: first_series(snapshot).update(bucket_size=0),
        "series": lambda snapshot: snapshot["store"]["runs"][0].update(series=[]),
        "marker": lambda snapshot: snapshot["store"]["runs"][0]["markers"].append({"kind": 7}),
        "state-type": lambda snapshot: snapshot["state"].update(status=123),
        "state-steps": lambda snapshot: snapshot["state"].update(step="5"),
        "event": lambda snapshot: snapshot["events"].append({"event": "run.finished", "run_id": snapshot["run_id"]}),
        "events": lambda snapshot: snapshot.update(events={"a": 1}),
        "store": lambda snapshot: snapshot.update(store={"max_points": 4000, "max_markers": 1000, "runs": 5}),
        "snapshot-deep": lambda snapshot: "[" * DEEP + "]" * DEEP,
    }


def test_hostile_journal_answers_404_or_409_never_500(tmp_path: Path) -> None:
    served = tmp_path / "runs"
    make_run(served / "good")
    journals = {**_hostile_summaries(), **_hostile_snapshots()}
    for key, change in journals.items():
        run_id = make_run(served / key)
        name = "summary.json" if key in _hostile_summaries() else "series.json"
        _edit_json(run_journal_dir(served / key, run_id) / name, change)
    with serve(str(served)) as server:
        assert server.request("/api/runs/good/opening")[0] == 200
        for key in journals:
            status, _, body = server.request(f"/api/runs/{key}/opening")
            assert status == 404 and b"Traceback" not in body, (key, status)
            status, _, body = server.request(f"/api/runs/{key}/stop", method="POST", body={"reason": "x"})
            assert status in (404, 409) and b"Traceback" not in body, (key, status)
            assert not (served / key / ".trainwire-stop").exists(), key
        assert sorted(_rows(server)) == sorted(["good", *journals])


def test_a_summary_link_outside_is_never_read(tmp_path: Path) -> None:
    served = tmp_path / "runs"
    make_run(served / "good")
    own = make_run(served / "linked")
    outside = tmp_path / "outside" / "summary.json"
    outside.parent.mkdir()
    summary = run_journal_dir(served / "linked", own) / "summary.json"
    outside.write_bytes(summary.read_bytes())
    os.truncate(outside, GIB)  # a summary, then a gigabyte of zeros
    summary.unlink()
    summary.symlink_to(outside)
    with serve(str(served)) as server:
        for _poll in range(3):
            rows = _rows(server)
            assert sorted(rows) == ["good", "linked"] and rows["linked"]["run_id"] == own
            assert server.request("/api/runs/linked/opening")[0] == 404
        peak = _peak_memory(server)
    assert peak < MEMORY_BOUND_BYTES, f"the server reached {peak >> 20} MiB"
    assert _cap_lines(server) == []  # refused as a link out before its size was looked at
