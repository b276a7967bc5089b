"""The journal folds the lines its run wrote from what the writer handed over (each as a reader
decodes it), never reading the stream back while the stream holds exactly those bytes; the
live summary and snapshot are still what `trainwire journal rebuild` makes of the files, for a
run of every kind of line, and when the stream is not the run's bytes alone."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from support.cli_process import trainwire

from trainwire import Run
from trainwire.contract.clock import FakeClock
from trainwire.contract.layout import SERIES_FILE, STEPS_FILE, STREAM_FILE, SUMMARY_FILE, run_journal_dir
from trainwire.writer import journal, journal_folder


def _training(run: Run, clock: FakeClock) -> None:
    """Steps (throttled: most are kept in the step file), NaN and infinite values, metrics with
    names beyond ASCII, evaluations, phases, trials and checkpoints."""
    step = 0
    with run.phase("warmup", total=20):
        for _ in range(20):
            step += 1
            clock.advance(0.3)
            run.step(step, loss=math.nan if step == 7 else 3.0 / step, learning_rate=1e-4, epoch=step / 100)
            run.advance()
    for trial in (1, 2, 3):
        with run.trial(trial, {"lr": 10.0**-trial, "optimizer": "adamw"}) as outcome:
            for _ in range(150):
                step += 1
                clock.advance(0.2)
                loss = math.inf if step == 100 else 2.0 / step + trial
                run.step(step, loss=loss, learning_rate=1e-3, metrics={"tokens": step * 8, "précision": 0.5})
                if step % 50 == 0:
                    run.eval(step, {"loss": 1.0 / step, "accuracy": step / 1000})
                    run.checkpoint(step, f"checkpoints/step-{step}")
            outcome.metrics = {"loss": 2.0 / step}
            if trial == 2:
                outcome.status = "pruned"
    for _ in range(300):
        step += 1
        clock.advance(0.05)
        run.step(step, loss=1.0 / step, learning_rate=5e-5, grad_norm=0.5, tokens_seen=step * 1024)


def _run(directory: Path) -> str:
    clock = FakeClock("2026-12-07T10:00:00Z")
    run = Run(directory, clock=clock, step_interval_s=1.0, heartbeat_thread=False, stage={"name": "pretrain"})
    run.start(total_steps=770, provenance=False, config={"seed": 7})
    _training(run, clock)
    run.finish("succeeded", checkpoint=directory / "checkpoints" / "final")
    return run.run_id


def _documents(directory: Path) -> dict[str, bytes]:
    return {name: (directory / name).read_bytes() for name in (SUMMARY_FILE, SERIES_FILE)}


def _rebuilt(output: Path, journal_dir: Path) -> dict[str, bytes]:
    result = trainwire("journal", "rebuild", str(output))
    assert result.returncode == 0, result.stderr
    return _documents(journal_dir)


@pytest.mark.parametrize("interval_s", [0.0, 3600.0])
def test_the_journal_folds_what_the_writer_holds_without_reading_the_stream_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, interval_s: float
) -> None:
    monkeypatch.setattr(journal, "SAVE_INTERVAL_S", interval_s)  # 0: a save due at every line
    opened: list[Path] = []
    original = journal_folder.open_regular

    def watched(path: Path, *args: Any, **kwargs: Any) -> Any:
        opened.append(Path(path))
        return original(path, *args, **kwargs)

    monkeypatch.setattr(journal_folder, "open_regular", watched)
    run_id = _run(tmp_path)
    directory = run_journal_dir(tmp_path, run_id)
    live = _documents(directory)
    assert (directory / STEPS_FILE).read_bytes().count(b"\n") > 100  # the throttle kept steps out of the stream

    assert tmp_path / STREAM_FILE not in opened  # folded from the lines handed over
    assert _rebuilt(tmp_path, directory) == live


def test_a_line_another_writer_put_in_the_stream_sends_the_fold_back_to_the_stream(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(journal, "SAVE_INTERVAL_S", 0.0)
    clock = FakeClock("2026-12-07T10:00:00Z")
    run = Run(tmp_path, clock=clock, step_interval_s=0, heartbeat_thread=False)
    run.start(total_steps=40, provenance=False)
    for step in range(1, 41):
        clock.advance(0.1)
        run.step(step, loss=1.0 / step)
        if step == 20:  # a second process appending to the same stream: its line is not the run's
            with open(tmp_path / STREAM_FILE, "ab") as stream:
                stream.write(
                    b'{"schema_version":1,"seq":1,"ts":"2026-12-07T10:00:02.000000Z","run_id":"other",'
                    b'"event":"run.heartbeat"}\n'
                )
    run.finish("succeeded")
    directory = run_journal_dir(tmp_path, run.run_id)
    live = _documents(directory)
    assert b'"step":40' in live[SERIES_FILE]
    assert _rebuilt(tmp_path, directory) == live


def test_past_the_held_lines_bound_the_fold_reads_the_stream_and_holds_again_after_a_save(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(journal, "MAX_HELD_LINES", 25)
    clock = FakeClock("2026-12-07T10:00:00Z")
    run = Run(tmp_path, clock=clock, step_interval_s=0, heartbeat_thread=False)
    run.start(total_steps=200, provenance=False)
    for step in range(1, 201):
        clock.advance(0.1)
        run.step(step, loss=1.0 / step, metrics={"accuracy": step / 200})
        if step == 100:
            monkeypatch.setattr(journal, "SAVE_INTERVAL_S", 0.0)  # saves from here on: held again
    run.finish("succeeded")
    directory = run_journal_dir(tmp_path, run.run_id)
    live = _documents(directory)
    assert b'"step":200' in live[SERIES_FILE]
    assert _rebuilt(tmp_path, directory) == live
