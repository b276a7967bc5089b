"""The journal's fold runs off the training thread: `Run.step` only hands lines over, and what
the journal's own thread folds and saves is what `trainwire journal rebuild` makes of the
same files, however the saves and the throttle's kept steps interleave."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from support.cli_process import trainwire
from support.step_files import kept_records

from trainwire import Run
from trainwire.contract.clock import FakeClock
from trainwire.contract.layout import SERIES_FILE, STEPS_FILE, SUMMARY_FILE, run_journal_dir
from trainwire.journal.fold import RunJournalFold
from trainwire.writer import journal
from trainwire.writer.sinks import FileSink


def _stepping(run: Run, clock: FakeClock, steps: int) -> None:
    for step in range(1, steps + 1):
        clock.advance(0.1)
        run.step(step, loss=1.0 / step, learning_rate=1e-3, metrics={"tokens": step})
        if step % 50 == 0:
            run.eval(step, {"loss": 2.0 / step})


def test_the_training_thread_folds_nothing_between_the_start_and_the_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(journal, "SAVE_INTERVAL_S", 0.0)  # a save due at every line
    training = threading.current_thread()
    folded_on: list[tuple[bool, bool]] = []  # (on the training thread, while it was stepping)
    stepping = False
    original = RunJournalFold.add_lines

    def watched(self: RunJournalFold, lines: Any) -> None:
        folded_on.append((threading.current_thread() is training, stepping))
        original(self, lines)

    monkeypatch.setattr(RunJournalFold, "add_lines", watched)
    clock = FakeClock("2026-12-04T10:00:00Z")
    run = Run(tmp_path, clock=clock, step_interval_s=0, heartbeat_thread=False)
    run.start(total_steps=2000, provenance=False)
    stepping = True
    _stepping(run, clock, 2000)
    stepping = False
    run.finish("succeeded")

    assert (True, True) not in folded_on  # no fold on the training thread while it trained
    assert (False, True) in folded_on  # the journal's thread folded meanwhile
    summary = (run_journal_dir(tmp_path, run.run_id) / SUMMARY_FILE).read_text("utf-8")
    assert '"step":2000' in summary.replace(" ", "")


@pytest.mark.parametrize("interval_s", [0.0, 3600.0])
def test_saves_on_the_journal_thread_give_what_a_rebuild_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, interval_s: float
) -> None:
    # a throttle that leaves nine steps of ten out, and saves racing the steps it keeps
    monkeypatch.setattr(journal, "SAVE_INTERVAL_S", interval_s)
    clock = FakeClock("2026-12-04T10:00:00Z")
    run = Run(tmp_path, clock=clock, step_interval_s=1.0, heartbeat_thread=False)
    run.start(total_steps=3000, provenance=False)
    with run.phase("train"):
        _stepping(run, clock, 3000)
    run.finish("succeeded")
    directory = run_journal_dir(tmp_path, run.run_id)
    live = {name: (directory / name).read_bytes() for name in (SUMMARY_FILE, SERIES_FILE)}
    kept = (directory / STEPS_FILE).read_bytes()
    assert kept.count(b"\n") > 2000  # most steps are in the step file, not the stream

    result = trainwire("journal", "rebuild", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert {name: (directory / name).read_bytes() for name in live} == live
    assert (directory / STEPS_FILE).read_bytes() == kept


def test_a_journal_whose_stream_is_gone_never_reaches_training(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    clock = FakeClock("2026-12-04T10:00:00Z")
    run = Run(tmp_path, clock=clock, step_interval_s=0, heartbeat_thread=False)
    run.start(total_steps=10, provenance=False)
    (tmp_path / "progress.jsonl").unlink()  # the journal folds from the stream: it cannot any more
    for step in range(1, 11):
        run.step(step, loss=1.0)
    run.finish("succeeded")
    assert run.status == "succeeded"
    assert "the journal in" in caplog.text


def test_every_kept_step_is_in_the_step_file_before_run_finished_reaches_the_stream(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a reader following the stream (an export with --follow) stops at `run.finished` and then
    # reads the step file once: every step the run kept must be there by then
    kept_when_finished: list[int] = []
    original = FileSink.write

    def watched(self: FileSink, line: bytes, event: dict[str, Any]) -> None:
        if event["event"] == "run.finished":
            steps = run_journal_dir(tmp_path, event["run_id"]) / STEPS_FILE
            kept_when_finished.append(len(kept_records(steps)) if steps.exists() else 0)
        original(self, line, event)

    monkeypatch.setattr(FileSink, "write", watched)
    clock = FakeClock()
    with Run(tmp_path, clock=clock, heartbeat_interval_s=None) as run:
        run.start(total_steps=1300)
        for step in range(1, 1301):  # 10 ms a step under the 1 s throttle: nearly every step is kept
            clock.advance(0.01)
            run.step(step, loss=1.0 / step)
    kept = len(kept_records(run_journal_dir(tmp_path, run.run_id) / STEPS_FILE))
    assert kept > 1000  # many more than the steps of one batch
    assert kept_when_finished == [kept]


def test_records_another_process_put_in_the_step_file_are_skipped_as_a_rebuild_skips_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the journal reads its own step file by the readers' rule: what is not a kept step of the
    # run in order is left out, and the fold goes on
    monkeypatch.setattr(journal, "SAVE_INTERVAL_S", 0.0)
    clock = FakeClock("2026-12-04T10:00:00Z")
    run = Run(tmp_path, clock=clock, step_interval_s=1.0, heartbeat_thread=False)
    run.start(total_steps=600, provenance=False)
    step_file = run_journal_dir(tmp_path, run.run_id) / STEPS_FILE
    _stepping(run, clock, 300)
    run.eval(300, {"loss": 0.5})  # a save: the step file exists and is read to its end
    with step_file.open("ab") as other:
        other.write(b'not json\n{"after": 3, "ts": "2026-12-04T10:00:00Z", "step": "x"}\n{"after": 2}\n')
    for step in range(301, 601):
        clock.advance(0.1)
        run.step(step, loss=1.0 / step)
    run.finish("succeeded")
    directory = run_journal_dir(tmp_path, run.run_id)
    live = {name: (directory / name).read_bytes() for name in (SUMMARY_FILE, SERIES_FILE)}
    assert b'"step":600' in live[SUMMARY_FILE].replace(b" ", b"")

    result = trainwire("journal", "rebuild", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert {name: (directory / name).read_bytes() for name in live} == live
