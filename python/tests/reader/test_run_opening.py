"""Opening a stream's runs from their journal snapshots: the same series as folding the whole
stream, the stream past the snapshot read on, and every snapshot that cannot be trusted
(missing, stale, another run's, torn, mid-line) falling back to the whole stream."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from trainwire.cli.plot import load_runs
from trainwire.contract.clock import FakeClock
from trainwire.contract.layout import SERIES_FILE, STREAM_FILE, run_journal_dir
from trainwire.reader.run_opening import open_from_snapshots, read_snapshot
from trainwire.reader.series import SeriesStore
from trainwire.reader.sources import read_file
from trainwire.reader.state import StreamReader
from trainwire.writer.run import Run


def _write_run(directory: Path, run_id: str, clock: FakeClock, *, finish: bool, first_step: int = 1) -> Run:
    run = Run(directory, run_id=run_id, clock=clock, step_interval_s=0, heartbeat_thread=False)
    run.start(total_steps=40, provenance=False)
    for step in range(first_step, first_step + 20):
        clock.advance(0.5)
        run.step(step, loss=3.0 / step, learning_rate=1e-3)
    run.eval(first_step + 19, {"loss": 0.2})
    if finish:
        run.finish("succeeded")
    return run


def _whole_stream(stream: Path) -> dict[str, dict[str, Any]]:
    reader, store = StreamReader(), SeriesStore()
    for chunk in read_file(stream):
        store.extend(reader.feed(chunk))
    reader.finish()
    return {run["run_id"]: run for run in store.to_dict()["runs"]}


def _opened(stream: Path) -> dict[str, dict[str, Any]]:
    return {run.run_id: run.series.to_dict() for run in load_runs(stream)}


@pytest.fixture
def resumed(tmp_path: Path) -> Path:
    """A finished run, then a resume still going on (its snapshot is the one of its start)."""
    clock = FakeClock("2026-12-01T10:00:00Z")
    _write_run(tmp_path, "first-run", clock, finish=True)
    _write_run(tmp_path, "second-run", clock, finish=False, first_step=21)
    return tmp_path / STREAM_FILE


def test_snapshots_and_the_tail_give_what_the_whole_stream_gives(resumed: Path) -> None:
    snapshot = read_snapshot(resumed, run_journal_dir(resumed.parent, "second-run"))
    assert snapshot is not None and snapshot["stream_offset"] < resumed.stat().st_size  # a tail to read
    opened = open_from_snapshots(resumed)
    assert opened is not None and [(run.run_id, run.status) for run in opened] == [
        ("first-run", "succeeded"),
        ("second-run", "running"),
    ]
    assert {run.run_id: run.series.to_dict() for run in opened} == _whole_stream(resumed)


def test_the_snapshot_is_gone_on_from_not_the_stream_before_it(resumed: Path) -> None:
    journal = run_journal_dir(resumed.parent, "first-run")
    snapshot = json.loads((journal / SERIES_FILE).read_text("utf-8"))
    loss = next(run for run in snapshot["store"]["runs"] if run["run_id"] == "first-run")["series"]["loss"]
    loss["buckets"][0][2][2] = 99.0  # a value only the snapshot holds
    (journal / SERIES_FILE).write_text(json.dumps(snapshot), "utf-8")
    first = _opened(resumed)["first-run"]
    assert first["series"]["loss"]["buckets"][0][2][2] == 99.0


def _replace_snapshot(stream: Path, change: Any) -> None:
    path = run_journal_dir(stream.parent, "second-run") / SERIES_FILE
    snapshot = json.loads(path.read_text("utf-8"))
    change(path, snapshot)


def _missing(path: Path, snapshot: dict[str, Any]) -> None:
    path.unlink()


def _stale(path: Path, snapshot: dict[str, Any]) -> None:
    snapshot["stream_offset"] = path.parent.parent.parent.joinpath(STREAM_FILE).stat().st_size + 100
    path.write_text(json.dumps(snapshot), "utf-8")


def _mid_line(path: Path, snapshot: dict[str, Any]) -> None:
    snapshot["stream_offset"] += 3
    path.write_text(json.dumps(snapshot), "utf-8")


def _other_run(path: Path, snapshot: dict[str, Any]) -> None:
    other = path.parent.parent / "first-run" / SERIES_FILE
    path.write_bytes(other.read_bytes())


def _torn(path: Path, snapshot: dict[str, Any]) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _rewritten_stream(path: Path, snapshot: dict[str, Any]) -> None:
    # the stream replaced since: the bytes at the offset are another run's step, not a start
    stream = path.parent.parent.parent / STREAM_FILE
    lines = stream.read_bytes().splitlines(keepends=True)
    head = sum(len(line) for line in lines if b'"first-run"' in line)
    foreign = next(line for line in lines if b'"first-run"' in line and b'"train.step"' in line)
    snapshot["stream_offset"] = head
    path.write_text(json.dumps(snapshot), "utf-8")
    stream.write_bytes(b"".join(line for line in lines if b'"first-run"' in line) + foreign)


@pytest.mark.parametrize("change", [_missing, _stale, _mid_line, _other_run, _torn, _rewritten_stream])
def test_a_snapshot_that_cannot_be_trusted_falls_back_to_the_whole_stream(resumed: Path, change: Any) -> None:
    _replace_snapshot(resumed, change)
    assert read_snapshot(resumed, run_journal_dir(resumed.parent, "second-run")) is None
    assert open_from_snapshots(resumed) is None
    assert _opened(resumed) == _whole_stream(resumed)


def test_a_stream_without_journals_is_folded_whole(tmp_path: Path) -> None:
    clock = FakeClock("2026-12-01T10:00:00Z")
    run = Run(tmp_path, run_id="bare-run", clock=clock, step_interval_s=0, heartbeat_thread=False, journal=False)
    run.start(total_steps=3, provenance=False)
    run.step(1, loss=1.0)
    run.finish("succeeded")
    stream = tmp_path / STREAM_FILE
    assert open_from_snapshots(stream) is None
    assert _opened(stream) == _whole_stream(stream)
