"""A plain `with Run(...)` block listens for a stop by itself: the README example, unchanged,
is stopped by the CLI, `request_stop`, TypeScript's `requestStop`, SIGTERM and SIGINT, and
ends `interrupted` with exit code 2; the handlers are Python's default ones replaced only
while the block runs, in the main thread."""

from __future__ import annotations

import signal
import sys
import threading
from pathlib import Path

import pytest
from support.stopping import (
    assert_stopped,
    cli_stop,
    readme_example,
    send,
    stopped_at_step,
    typescript_stop,
)
from support.stream_files import of, stream_of

from trainwire import Run, StopControl, request_stop
from trainwire.stop import STOP_FILE


def stopped_readme(tmp_path: Path, stop) -> tuple[object, Path]:  # type: ignore[no-untyped-def]
    script = readme_example(tmp_path)
    stream = tmp_path / "out" / "progress.jsonl"
    ended = stopped_at_step([sys.executable, str(script)], stream, stop, cwd=tmp_path)
    return ended, stream


@pytest.mark.slow
def test_trainwire_stop_ends_the_readme_example_interrupted_with_exit_code_2(tmp_path: Path) -> None:
    ended, stream = stopped_readme(tmp_path, lambda process: cli_stop(tmp_path / "out", "--reason", "newcomer"))
    finished = assert_stopped(ended, stream, "control_file")  # type: ignore[arg-type]
    assert of(stream_of(stream), "stop.requested")[0]["reason"] == "newcomer"
    assert of(stream_of(stream), "phase.ended") == [
        {**of(stream_of(stream), "phase.ended")[0], "phase": "train", "status": "interrupted"}
    ]
    assert finished["step"] < 100
    assert ended.stdout == "interrupted\n"  # type: ignore[attr-defined]


@pytest.mark.slow
@pytest.mark.parametrize(("sent", "reason"), [(signal.SIGTERM, "sigterm"), (signal.SIGINT, "sigint")])
def test_a_signal_ends_the_readme_example_interrupted_without_a_traceback(
    tmp_path: Path, sent: signal.Signals, reason: str
) -> None:
    ended, stream = stopped_readme(tmp_path, send(sent))
    assert_stopped(ended, stream, reason)  # type: ignore[arg-type]


@pytest.mark.slow
def test_request_stop_and_typescripts_request_stop_end_the_readme_example(tmp_path: Path) -> None:
    python_side, python_dir = tmp_path / "python", tmp_path / "node"
    python_side.mkdir()
    python_dir.mkdir()
    ended, stream = stopped_readme(python_side, lambda process: request_stop(python_side / "out"))
    assert_stopped(ended, stream, "control_file")  # type: ignore[arg-type]
    ended, stream = stopped_readme(python_dir, lambda process: typescript_stop(python_dir / "out"))
    assert_stopped(ended, stream, "control_file")  # type: ignore[arg-type]


def test_the_block_swallows_its_own_stop_and_the_code_after_it_runs(tmp_path: Path) -> None:
    reached = []
    with Run(tmp_path, step_interval_s=0) as run:
        run.start(total_steps=None, provenance=False)
        with run.phase("train"):
            run.step(1)  # the first read of the control file: nothing there yet
            request_stop(tmp_path, reason="enough")
            for step in range(2, 10**7):  # the file is read within check_interval_s
                run.step(step, loss=1.0)
                reached.append(step)
        reached.append("after the loop")
    assert (run.status, run.exit_code, run.stop_reason) == ("interrupted", 2, "control_file")
    assert len(reached) < 10**7 - 2 and reached[-1] != "after the loop"
    last_written = of(stream_of(tmp_path / "progress.jsonl"), "train.step")[-1]["step"]
    assert last_written == (reached[-1] if reached else 1) + 1  # written, then its run.step raised
    assert not (tmp_path / STOP_FILE).exists()


def test_a_stop_is_checked_at_a_phase_boundary_at_once(tmp_path: Path) -> None:
    ran = []
    with Run(tmp_path, step_interval_s=0) as run:
        run.start(total_steps=2, provenance=False)
        with run.phase("train"):
            run.step(1)
            request_stop(tmp_path)  # within the control file's check interval of the step's read
        with run.phase("save"):
            ran.append("save")
    assert ran == []
    phases = [(line["phase"], line["status"]) for line in of(stream_of(tmp_path / "progress.jsonl"), "phase.ended")]
    assert phases == [("train", "ok")]
    assert run.status == "interrupted"


def test_a_signal_in_the_block_ends_it_at_the_next_step_and_handlers_are_restored(tmp_path: Path) -> None:
    before = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    with Run(tmp_path, step_interval_s=0) as run:
        run.start(total_steps=None, provenance=False)
        assert signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, before[signal.SIGTERM])
        signal.raise_signal(signal.SIGTERM)
        run.step(1)
        pytest.fail("the step after a signal raises")
    assert (run.status, run.stop_reason) == ("interrupted", "sigterm")
    assert {number: signal.getsignal(number) for number in before} == before


def test_a_handler_that_is_not_pythons_default_is_kept(tmp_path: Path) -> None:
    def theirs(number: int, frame: object) -> None:
        raise AssertionError("not called")

    previous = signal.signal(signal.SIGTERM, theirs)
    try:
        with Run(tmp_path) as run:
            assert signal.getsignal(signal.SIGTERM) is theirs
            run.start(provenance=False)
        assert signal.getsignal(signal.SIGTERM) is theirs
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_a_block_in_another_thread_installs_no_handler_but_reads_the_control_file(tmp_path: Path) -> None:
    outcome: dict[str, object] = {}

    def train() -> None:
        with Run(tmp_path, step_interval_s=0) as run:
            outcome["handler"] = signal.getsignal(signal.SIGTERM)
            run.start(provenance=False)
            request_stop(tmp_path)
            for step in range(1, 1000):
                run.step(step)
        outcome["status"] = run.status

    thread = threading.Thread(target=train)
    thread.start()
    thread.join(30)
    assert outcome == {"handler": signal.SIG_DFL, "status": "interrupted"}


def test_stop_false_listens_to_nothing(tmp_path: Path) -> None:
    with Run(tmp_path, step_interval_s=0, stop=False) as run:
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
        run.start(provenance=False)
        request_stop(tmp_path)
        with run.phase("train"):
            for step in range(1, 4):
                run.step(step)
    assert run.status == "succeeded"
    assert (tmp_path / STOP_FILE).exists()


def test_a_stop_control_made_for_the_run_decides_in_its_place(tmp_path: Path) -> None:
    with Run(tmp_path, step_interval_s=0) as run:
        run.start(provenance=False)
        control = StopControl(tmp_path, run=run, check_interval_s=0)
        request_stop(tmp_path)
        for step in range(1, 4):
            run.step(step)  # the run's own stop stands down: no raise
        assert control.check() is not None  # the request was left to it
    assert run.stop_reason == "control_file"
