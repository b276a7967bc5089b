"""Opening a stream's runs from their journal snapshots: the same states, series and view
events as folding the whole stream, the stream past the snapshot read on, and every snapshot
that cannot be trusted (missing, version 1, stale, another run's, torn, mid-line) falling
back to the whole stream."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any

import pytest

from trainwire.cli.plot import load_runs
from trainwire.contract.canonical import dumps
from trainwire.contract.clock import FakeClock
from trainwire.contract.layout import SERIES_FILE, STREAM_FILE, run_journal_dir
from trainwire.journal.opening import open_from_snapshots, read_snapshot
from trainwire.lines.view_events import VIEW_EVENTS
from trainwire.reader.series import SeriesStore
from trainwire.reader.sources import read_file
from trainwire.reader.state import StreamReader
from trainwire.writer import journal
from trainwire.writer.run import Run


def _write_run(
    directory: Path,
    run_id: str,
    clock: FakeClock,
    *,
    finish: bool,
    first_step: int = 1,
    saved_until: int = 0,
    monkeypatch: pytest.MonkeyPatch,
) -> Run:
    """A run with a phase and two trials; the journal saves its snapshot at every line until
    step `saved_until` (then at its 30 s interval), so the stream goes on past the snapshot."""
    monkeypatch.setattr(journal, "SAVE_INTERVAL_S", 0.0)
    run = Run(directory, run_id=run_id, clock=clock, step_interval_s=0, heartbeat_thread=False)
    run.start(total_steps=40, total_trials=2, provenance=False)
    run.phase_started("train")
    for step in range(first_step, first_step + 20):
        if step == saved_until:
            monkeypatch.setattr(journal, "SAVE_INTERVAL_S", 3600.0)
            _wait_for_the_snapshot(directory, run_id)
        if step in (first_step, first_step + 10):
            trial = 1 if step == first_step else 2
            if trial == 2:
                run.trial_ended(
                    1, "succeeded", metrics={"loss": 0.5}, best={"trial": 1, "metric": "loss", "value": 0.5}
                )
            run.trial_started(trial, {"lr": 1e-3 * trial})
        clock.advance(0.5)
        run.step(step, loss=3.0 / step, learning_rate=1e-3, trial=1 if step < first_step + 10 else 2)
    run.eval(first_step + 19, {"loss": 0.2})
    if finish:
        run.trial_ended(2, "succeeded", metrics={"loss": 0.4}, best={"trial": 2, "metric": "loss", "value": 0.4})
        run.phase_ended("train")
        run.stop_requested("enough")
        run.finish("succeeded")
    return run


def _wait_for_the_snapshot(directory: Path, run_id: str) -> None:
    """Until the run's snapshot covers the stream as it is: the journal saves on a thread of its own."""
    path, size = run_journal_dir(directory, run_id) / SERIES_FILE, (directory / STREAM_FILE).stat().st_size
    deadline = time.monotonic() + 30
    while not (path.exists() and json.loads(path.read_text("utf-8"))["stream_offset"] == size):
        assert time.monotonic() < deadline, "the journal did not save its snapshot"
        time.sleep(0.01)


def _whole_stream(stream: Path) -> dict[str, dict[str, Any]]:
    reader, store = StreamReader(), SeriesStore()
    for chunk in read_file(stream):
        store.extend(reader.feed(chunk))
    reader.finish()
    return {run["run_id"]: run for run in store.to_dict()["runs"]}


def _opened(stream: Path) -> dict[str, dict[str, Any]]:
    return {run.run_id: run.series.to_dict() for run in load_runs(stream)}


@pytest.fixture
def resumed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A finished run, then a resume still going on, its snapshot saved in its second trial
    and the stream written on past it."""
    clock = FakeClock("2026-12-01T10:00:00Z")
    _write_run(tmp_path, "first-run", clock, finish=True, monkeypatch=monkeypatch)
    _write_run(tmp_path, "second-run", clock, finish=False, first_step=21, saved_until=35, monkeypatch=monkeypatch)
    return tmp_path / STREAM_FILE


def test_snapshots_and_the_tail_give_what_the_whole_stream_gives(resumed: Path) -> None:
    snapshot = read_snapshot(resumed, run_journal_dir(resumed.parent, "second-run"))
    data = resumed.read_bytes()
    assert snapshot is not None and snapshot["stream_offset"] < len(data)  # a tail to read
    assert snapshot["state"]["trials"]["count"] == 2 and snapshot["state"]["phase"] == "train"  # taken mid-run
    opened = open_from_snapshots(resumed)
    assert opened is not None and [(run.run_id, run.status) for run in opened.runs] == [
        ("first-run", "succeeded"),
        ("second-run", "running"),
    ]
    reader, store, events = StreamReader(), SeriesStore(), []
    for chunk in read_file(resumed):
        applied = reader.feed(chunk)
        store.extend(applied)
        events += [line for line in applied.dicts if line["event"] in VIEW_EVENTS]
    reader.finish()
    whole = reader.to_dict()
    assert opened.state["runs"] == whole["runs"] and [run.state.to_dict() for run in opened.runs] == whole["runs"]
    assert dumps(opened.series().to_dict()) == dumps(store.to_dict())
    assert [line for run in opened.runs for line in run.events] == events
    # the first run's snapshot is at its end: only the second run's tail is read
    first = read_snapshot(resumed, run_journal_dir(resumed.parent, "first-run"))
    assert first is not None and first["stream_offset"] < snapshot["stream_offset"]
    assert opened.offset == opened.state["consumed_bytes"] == len(data)
    assert opened.state["lines"] == data[snapshot["stream_offset"] :].count(b"\n")
    assert opened.state["diagnostics"] == [] and opened.state["partial_tail_bytes"] == 0


def test_the_view_events_keep_the_run_started_and_the_latest(tmp_path: Path) -> None:
    clock = FakeClock("2026-12-01T10:00:00Z")
    run = Run(tmp_path, run_id="many-phases", clock=clock, step_interval_s=0, heartbeat_thread=False)
    run.start(provenance=False)
    for number in range(600):
        run.phase_started(f"p{number}")
        run.phase_ended(f"p{number}")
    run.finish("succeeded")
    opened = open_from_snapshots(tmp_path / STREAM_FILE)
    assert opened is not None
    events = opened.runs[0].events
    assert len(events) == 1000 and events[0]["event"] == "run.started" and events[-1]["event"] == "run.finished"
    # 1202 view events: after run.started, the 202 oldest (p0 to p100) are left out
    assert events[1] == {**events[1], "event": "phase.started", "phase": "p101"}


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


def _version_1(path: Path, snapshot: dict[str, Any]) -> None:
    snapshot["snapshot_version"] = 1  # no state or events to open from
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


@pytest.mark.parametrize("change", [_missing, _version_1, _stale, _mid_line, _other_run, _torn, _rewritten_stream])
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


def _whole_read(stream: Path) -> tuple[dict[str, Any], SeriesStore, list[dict[str, Any]]]:
    """A reader's state, series store and view events after the whole stream."""
    reader, store, events = StreamReader(), SeriesStore(), []
    for chunk in read_file(stream):
        applied = reader.feed(chunk)
        store.extend(applied)
        events += [line for line in applied.dicts if line["event"] in VIEW_EVENTS]
    reader.finish()
    return reader.to_dict(), store, events


def _unread_lines(stream: Path) -> list[tuple[int, int]]:
    """(start, end) of every line that lies before its own run's snapshot offset, its
    `run.started` left out: bytes no tail holds."""
    data = stream.read_bytes()
    offsets: dict[str, int] = {}
    spans, start = [], 0
    for line in data.splitlines(keepends=True):
        value = json.loads(line)
        run_id = value["run_id"]
        if run_id not in offsets:
            snapshot = read_snapshot(stream, run_journal_dir(stream.parent, run_id))
            assert snapshot is not None
            offsets[run_id] = snapshot["stream_offset"]
        if value["event"] != "run.started" and start + len(line) <= offsets[run_id]:
            spans.append((start, start + len(line) - 1))
        start += len(line)
    return spans


def _garble(stream: Path, spans: list[tuple[int, int]]) -> None:
    """Each span's bytes replaced by as many that are no JSON (the newlines kept)."""
    data = bytearray(stream.read_bytes())
    for start, end in spans:
        data[start:end] = b"#" * (end - start)
    stream.write_bytes(bytes(data))


def _assert_opens_as_whole(stream: Path, whole: tuple[dict[str, Any], SeriesStore, list[dict[str, Any]]]) -> None:
    state, store, events = whole
    opened = open_from_snapshots(stream)
    assert opened is not None
    assert opened.state["runs"] == state["runs"] and [run.state.to_dict() for run in opened.runs] == state["runs"]
    assert dumps(opened.series().to_dict()) == dumps(store.to_dict())
    assert [line for run in opened.runs for line in run.events] == events
    assert opened.offset == opened.state["consumed_bytes"] == state["consumed_bytes"]
    assert opened.state["diagnostics"] == []


def test_a_small_run_then_a_big_one_reads_only_each_run_s_tail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first run stopped without its end (its last lines past its snapshot), the second
    saved its snapshot late in its steps: the second run's lines before that snapshot are
    never read, so garbling them changes nothing and raises no diagnostic."""
    clock = FakeClock("2026-12-01T10:00:00Z")
    _write_run(tmp_path, "small-run", clock, finish=False, saved_until=15, monkeypatch=monkeypatch)
    _write_run(tmp_path, "big-run", clock, finish=True, first_step=21, saved_until=38, monkeypatch=monkeypatch)
    stream = tmp_path / STREAM_FILE
    data = stream.read_bytes()
    small = read_snapshot(stream, run_journal_dir(tmp_path, "small-run"))
    assert small is not None and b'"big-run"' not in data[: small["stream_offset"]]
    assert b'"small-run"' in data[small["stream_offset"] :]  # a tail of the small run to read
    whole = _whole_read(stream)
    unread = [span for span in _unread_lines(stream) if b'"big-run"' in data[span[0] : span[1]]]
    assert len(unread) > 10
    _garble(stream, unread)
    assert _whole_read(stream)[0]["diagnostics"]  # a reader of those bytes sees them
    _assert_opens_as_whole(stream, whole)
    big = read_snapshot(stream, run_journal_dir(tmp_path, "big-run"))
    assert big is not None
    big_start = data.rindex(b"\n", 0, data.index(b'"big-run"')) + 1
    opened = open_from_snapshots(stream)
    assert opened is not None  # the lines read: the small run's tail, the big run's past its snapshot
    assert opened.state["lines"] == data[small["stream_offset"] : big_start].count(b"\n") + data[
        big["stream_offset"] :
    ].count(b"\n")


@pytest.mark.parametrize("seed", range(8))
def test_random_multi_run_streams_open_as_the_whole_stream_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    chance = random.Random(seed)
    clock = FakeClock("2026-12-01T10:00:00Z")
    for number in range(chance.randint(2, 4)):
        _write_run(
            tmp_path,
            f"run-{number}",
            clock,
            finish=chance.random() < 0.5,
            first_step=1 + 20 * number,
            saved_until=chance.choice([0, 1 + 20 * number + chance.randint(1, 19)]),
            monkeypatch=monkeypatch,
        )
    stream = tmp_path / STREAM_FILE
    whole = _whole_read(stream)
    _garble(stream, _unread_lines(stream))
    _assert_opens_as_whole(stream, whole)


def _line_of_the_first_run_at_the_end(stream: Path) -> None:
    step = next(line for line in stream.read_bytes().splitlines() if b'"first-run"' in line and b"train.step" in line)
    with stream.open("ab") as out:
        out.write(step + b"\n")


def _offsets_out_of_order(stream: Path) -> None:
    path = run_journal_dir(stream.parent, "first-run") / SERIES_FILE
    snapshot = json.loads(path.read_text("utf-8"))
    snapshot["stream_offset"] = stream.stat().st_size  # saved after the later run's last snapshot
    path.write_text(json.dumps(snapshot), "utf-8")


@pytest.mark.parametrize("change", [_line_of_the_first_run_at_the_end, _offsets_out_of_order])
def test_runs_that_do_not_follow_one_another_fall_back_to_the_whole_stream(resumed: Path, change: Any) -> None:
    change(resumed)
    assert read_snapshot(resumed, run_journal_dir(resumed.parent, "first-run")) is not None
    assert read_snapshot(resumed, run_journal_dir(resumed.parent, "second-run")) is not None
    assert open_from_snapshots(resumed) is None
    assert _opened(resumed) == _whole_stream(resumed)


def test_a_tail_of_several_chunks_ends_where_the_next_run_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first run's snapshot saved after its first step, then megabytes of steps: its tail
    spans many reads, and the next run's start is found past them."""
    clock = FakeClock("2026-12-01T10:00:00Z")
    monkeypatch.setattr(journal, "SAVE_INTERVAL_S", 0.0)
    first = Run(tmp_path, run_id="long-tail", clock=clock, step_interval_s=0, heartbeat_thread=False)
    first.start(total_steps=20_000, provenance=False)
    first.step(1, loss=1.0)
    monkeypatch.setattr(journal, "SAVE_INTERVAL_S", 3600.0)
    for step in range(2, 14_000):
        clock.advance(0.01)
        first.step(step, loss=1.0 / step, metrics={"reward": float(step)})
    _write_run(tmp_path, "next-run", clock, finish=True, first_step=1, saved_until=15, monkeypatch=monkeypatch)
    stream = tmp_path / STREAM_FILE
    data = stream.read_bytes()
    snapshot = read_snapshot(stream, run_journal_dir(tmp_path, "long-tail"))
    assert snapshot is not None and data.index(b'"next-run"') - snapshot["stream_offset"] > 3 << 20
    whole = _whole_read(stream)
    _garble(stream, _unread_lines(stream))
    _assert_opens_as_whole(stream, whole)
