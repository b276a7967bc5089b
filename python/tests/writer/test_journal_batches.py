"""The journal's fold is cheaper, never different: its batches (the plain steps between two
other lines folded at once) give what `trainwire journal rebuild` (one line at a time) makes
of the same files, for a run of every kind of line; and a save that covers nothing new does
not write the snapshot again (a run's end used to write it twice)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from support.cli_process import trainwire

from trainwire import Run
from trainwire.contract.clock import FakeClock
from trainwire.contract.layout import SERIES_FILE, STEPS_FILE, SUMMARY_FILE, run_journal_dir
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
def test_the_journals_batches_give_what_a_rebuild_gives_for_every_kind_of_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, interval_s: float
) -> None:
    monkeypatch.setattr(journal, "SAVE_INTERVAL_S", interval_s)  # 0: a save due at every line
    run_id = _run(tmp_path)
    directory = run_journal_dir(tmp_path, run_id)
    live = _documents(directory)
    assert (directory / STEPS_FILE).read_bytes().count(b"\n") > 100  # the throttle kept steps out of the stream
    assert _rebuilt(tmp_path, directory) == live


def test_the_run_end_writes_the_snapshot_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    written: list[int] = []
    original = journal_folder.write_snapshot

    def counted(directory: Path, snapshot: dict[str, Any]) -> Path:
        written.append(snapshot["stream_offset"])
        return original(directory, snapshot)

    monkeypatch.setattr(journal_folder, "write_snapshot", counted)
    clock = FakeClock("2026-12-07T10:00:00Z")
    run = Run(tmp_path, clock=clock, step_interval_s=0, heartbeat_thread=False)
    run.start(total_steps=100, provenance=False)
    for step in range(1, 101):
        clock.advance(0.1)
        run.step(step, loss=1.0 / step)
    run.finish("succeeded")
    assert len(written) == 2 and written[0] < written[1]  # the start's, then the end's alone
    directory = run_journal_dir(tmp_path, run.run_id)
    assert _rebuilt(tmp_path, directory) == _documents(directory)
