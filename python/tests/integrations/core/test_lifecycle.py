"""The lifecycle core every trainer integration adapts (trainwire.integrations.core.lifecycle), driven
without a framework: real runs, real stop controls, real control files and signals."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from trainwire.contract.clock import FakeClock
from trainwire.contract.errors import RunInterrupted
from trainwire.contract.models import EVENT_ADAPTER
from trainwire.integrations.core.lifecycle import Lifecycle, LifecycleAdapter, is_out_of_memory, owned_run, watched_stop
from trainwire.stop import STOP_FILE, StopControl, StopRequest, request_stop
from trainwire.writer.run import Run

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX signals")
QUIET = {"step_interval_s": 0, "heartbeat_interval_s": None}


def events(path: Path) -> list[dict[str, Any]]:
    lines = (path / "progress.jsonl").read_text(encoding="utf-8").splitlines()
    for line in lines:
        EVENT_ADAPTER.validate_json(line, strict=True)
    return [json.loads(line) for line in lines]


def names(stream: list[dict[str, Any]]) -> list[str]:
    return [line["event"] for line in stream]


def start(run: Run) -> None:
    run.start(total_steps=10, provenance=False)


def train(lifecycle: Lifecycle, steps: range, *, begin_at: int = 0) -> StopRequest | None:
    """A training loop as an adapter drives it: the run writes each step, the lifecycle decides the stop."""
    run = lifecycle.begin_train(begin_at, total_steps=10, start=start)
    for step in steps:
        if run is not None:
            run.step(step, loss=1.0 / step)
        found = lifecycle.decide_stop(step)
        if found is not None:
            return found
    return None


def owning(tmp_path: Path, **options: Any) -> Lifecycle:
    run, new_run = owned_run(tmp_path, **QUIET)
    stop = watched_stop(run, zero=True, check_interval_s=0)
    return Lifecycle(run, stop=stop, owns_run=True, new_run=new_run, **options)


# -- ownership ------------------------------------------------------------------------------


def test_an_owned_run_is_started_in_the_train_phase_and_finished_succeeded(tmp_path: Path) -> None:
    lifecycle = owning(tmp_path)
    assert train(lifecycle, range(1, 4)) is None
    lifecycle.end_train()
    lifecycle.finish()
    stream = events(tmp_path)
    assert names(stream) == ["run.started", "phase.started", *["train.step"] * 3, "phase.ended", "run.finished"]
    assert (stream[-2]["phase"], stream[-2]["status"]) == ("train", "ok")
    assert (stream[-1]["status"], stream[-1]["step"]) == ("succeeded", 3)
    assert not lifecycle.stopped and not lifecycle.in_train


def test_a_callers_run_is_started_if_needed_but_never_finished(tmp_path: Path) -> None:
    run = Run(tmp_path, **QUIET)
    lifecycle = Lifecycle(run, stop=StopControl(tmp_path, run=run))
    train(lifecycle, range(1, 3))
    lifecycle.end_train()
    lifecycle.finish()
    assert run.status is None
    assert names(events(tmp_path)) == ["run.started", "phase.started", "train.step", "train.step", "phase.ended"]


def test_a_training_after_the_owned_run_ended_is_a_new_run_in_the_same_file(tmp_path: Path) -> None:
    renewals: list[str] = []
    lifecycle = owning(tmp_path, renewed=lambda: renewals.append(lifecycle.run.run_id if lifecycle.run else ""))
    first = lifecycle.run
    for _ in range(2):
        train(lifecycle, range(1, 3))
        lifecycle.end_train()
        lifecycle.finish()
    second = lifecycle.run
    assert first is not None and second is not None and first.run_id != second.run_id
    assert renewals == [second.run_id]
    finished = [(line["run_id"], line["status"]) for line in events(tmp_path) if line["event"] == "run.finished"]
    assert finished == [(first.run_id, "succeeded"), (second.run_id, "succeeded")]


# -- restarts -------------------------------------------------------------------------------


def test_a_begin_without_an_end_is_an_out_of_memory_attempt_of_the_same_run(tmp_path: Path) -> None:
    lifecycle = owning(tmp_path)
    train(lifecycle, range(1, 4))
    lifecycle.begin_train(0, total_steps=10, start=start, batch_size_from=8, batch_size_to=4)
    restarts = [line for line in events(tmp_path) if line["event"] == "train.restarted"]
    assert [(line["reason"], line["previous_step"], line["step"], line["batch_size_to"]) for line in restarts] == [
        ("oom", 3, 0, 4)
    ]
    assert names(events(tmp_path)).count("phase.started") == 1  # the phase stays open


@pytest.mark.parametrize(
    "error, reason",
    [(RuntimeError("CUDA out of memory. Tried to allocate"), "oom"), (ValueError("bad batch"), "other")],
)
def test_a_callers_run_trained_again_from_an_earlier_step_is_restarted(
    tmp_path: Path, error: Exception, reason: str
) -> None:
    run = Run(tmp_path, **QUIET)
    lifecycle = Lifecycle(run)
    train(lifecycle, range(1, 4))
    lifecycle.fail(error)
    train(lifecycle, range(1, 3))
    lifecycle.end_train()
    stream = events(tmp_path)
    assert [(line["phase"], line["status"]) for line in stream if line["event"] == "phase.ended"] == [
        ("train", "failed"),
        ("train", "ok"),
    ]
    assert [line["reason"] for line in stream if line["event"] == "train.restarted"] == [reason]
    assert run.status is None


def test_a_callers_run_going_on_from_its_last_step_is_not_restarted(tmp_path: Path) -> None:
    lifecycle = Lifecycle(Run(tmp_path, **QUIET))
    train(lifecycle, range(1, 3))
    lifecycle.end_train()
    train(lifecycle, range(3, 5), begin_at=2)
    assert "train.restarted" not in names(events(tmp_path))


def test_a_training_in_a_new_trial_is_not_a_restart_but_one_again_in_the_same_trial_is(tmp_path: Path) -> None:
    run = Run(tmp_path, **QUIET)
    lifecycle = Lifecycle(run)
    for trial, error in ((1, ValueError("bad batch")), (2, None), (2, None)):
        with run.trial(trial):
            train(lifecycle, range(1, 4))
            if error is not None:
                lifecycle.fail(error)
            else:
                lifecycle.end_train()
    stream = events(tmp_path)
    assert [(line["trial"], line["step"]) for line in stream if line["event"] == "train.restarted"] == [(2, 0)]


def test_a_search_keeps_its_owned_run_across_trainings_and_finishes_it_at_its_end(tmp_path: Path) -> None:
    lifecycle = owning(tmp_path)
    lifecycle.begin_search()
    for trial in (1, 2):
        with lifecycle.run.trial(trial):  # type: ignore[union-attr]
            train(lifecycle, range(1, 3))
            lifecycle.end_train()
            lifecycle.finish()
    lifecycle.end_search(None)
    stream = events(tmp_path)
    assert len({line["run_id"] for line in stream}) == 1
    assert [line["event"] for line in stream].count("run.finished") == 1
    assert (stream[-1]["event"], stream[-1]["status"]) == ("run.finished", "succeeded")


# -- failures -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "error, phase, status",
    [(RuntimeError("boom"), "failed", "failed"), (KeyboardInterrupt(), "interrupted", "interrupted")],
)
def test_a_failed_training_ends_the_phase_and_the_owned_run(
    tmp_path: Path, error: BaseException, phase: str, status: str
) -> None:
    lifecycle = owning(tmp_path)
    train(lifecycle, range(1, 3))
    lifecycle.fail(error)
    lifecycle.fail(error)  # a second report writes nothing more
    stream = events(tmp_path)
    assert names(stream)[-2:] == ["phase.ended", "run.finished"]
    assert (stream[-2]["status"], stream[-1]["status"]) == (phase, status)
    assert not lifecycle.in_train


def test_an_error_while_the_run_finishes_closes_it_without_a_second_end(tmp_path: Path) -> None:
    lifecycle = owning(tmp_path)
    train(lifecycle, range(1, 3))
    lifecycle.end_train()
    run = lifecycle.run
    assert run is not None
    finish = run.finish

    def interrupted_finish(*args: Any, **kwargs: Any) -> None:
        raise KeyboardInterrupt  # as if a sink was interrupted before the line was out

    run.finish = interrupted_finish  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        lifecycle.finish()
    run.finish = finish  # type: ignore[method-assign]
    lifecycle.fail(KeyboardInterrupt())
    assert run.closed and "run.finished" not in names(events(tmp_path))


# -- the stop -------------------------------------------------------------------------------


def test_a_control_file_is_honoured_at_the_step_end_after_its_check_interval(tmp_path: Path) -> None:
    clock = FakeClock()
    run, _ = owned_run(tmp_path, clock=clock, **QUIET)
    stop = StopControl(tmp_path, run=run, check_interval_s=1.0, clock=clock)
    lifecycle = Lifecycle(run, stop=stop, owns_run=True)
    lifecycle.begin_train(0, total_steps=10, start=start)
    assert lifecycle.decide_stop(1) is None  # the first check reads the directory at once
    request_stop(tmp_path, reason="enough")
    assert lifecycle.decide_stop(2) is None  # not yet due
    clock.advance(1.0)
    found = lifecycle.decide_stop(3)
    assert found == StopRequest(source="control_file", reason="enough")
    assert lifecycle.decide_stop(4) is None and lifecycle.stop_request is found  # honoured once
    lifecycle.stop_checkpoint = tmp_path / "checkpoint-3"
    lifecycle.end_train()
    lifecycle.finish()
    stream = events(tmp_path)
    assert names(stream) == ["run.started", "phase.started", "stop.requested", "phase.ended", "run.finished"]
    assert stream[-2]["status"] == "interrupted"
    assert (stream[-1]["status"], stream[-1]["reason"], stream[-1]["checkpoint"]) == (
        "interrupted",
        "control_file",
        "checkpoint-3",
    )
    assert not (tmp_path / STOP_FILE).exists()


def test_a_new_owned_run_forgets_the_stop_of_the_last_one(tmp_path: Path) -> None:
    lifecycle = owning(tmp_path)
    request_stop(tmp_path)
    assert train(lifecycle, range(1, 5)) is not None
    lifecycle.end_train()
    lifecycle.finish()
    assert train(lifecycle, range(1, 5)) is None and not lifecycle.stopped
    lifecycle.end_train()
    lifecycle.finish()
    assert [line["status"] for line in events(tmp_path) if line["event"] == "run.finished"] == [
        "interrupted",
        "succeeded",
    ]


def test_without_a_stop_control_nothing_is_decided(tmp_path: Path) -> None:
    lifecycle = Lifecycle(Run(tmp_path, **QUIET))
    request_stop(tmp_path)
    assert train(lifecycle, range(1, 3)) is None and lifecycle.poll_stop() is None
    assert (tmp_path / STOP_FILE).exists()


def test_raise_if_stopped_tells_the_caller_through_the_adapter(tmp_path: Path) -> None:
    class Adapter(LifecycleAdapter):
        def __init__(self, lifecycle: Lifecycle) -> None:
            self.lifecycle = lifecycle

    adapter = Adapter(owning(tmp_path))
    adapter.raise_if_stopped()
    adapter.stop.request(reason="from code")  # type: ignore[union-attr]
    assert adapter.lifecycle.poll_stop() == adapter.stop_request
    assert adapter.stopped and adapter.owns_run and adapter.sync_every_steps == 1
    with pytest.raises(RunInterrupted, match="api"):
        adapter.raise_if_stopped()


@posix_only
def test_signal_handlers_are_in_force_only_during_training(tmp_path: Path) -> None:
    previous = signal.getsignal(signal.SIGTERM)
    lifecycle = owning(tmp_path, signals=True)
    lifecycle.begin_train(0, total_steps=10, start=start)
    assert lifecycle.stop is not None and lifecycle.stop.handles_signals
    os.kill(os.getpid(), signal.SIGTERM)  # delivered to this (main) thread before kill returns
    assert lifecycle.poll_stop() == StopRequest(source="signal", signal="SIGTERM")
    lifecycle.end_train()
    lifecycle.finish()
    assert signal.getsignal(signal.SIGTERM) is previous and not lifecycle.stop.handles_signals
    assert events(tmp_path)[-1]["reason"] == "sigterm"


@posix_only
def test_handlers_the_caller_installed_are_left_to_the_caller(tmp_path: Path) -> None:
    lifecycle = owning(tmp_path, signals=True)
    assert lifecycle.stop is not None
    lifecycle.stop.install_signal_handlers()
    try:
        lifecycle.begin_train(0, total_steps=10, start=start)
        lifecycle.fail(RuntimeError("boom"))
        assert lifecycle.stop.handles_signals
    finally:
        lifecycle.stop.uninstall()


# -- ranks, flushing, helpers -------------------------------------------------------------------


def test_a_rank_that_does_not_write_keeps_the_state_in_step(tmp_path: Path) -> None:
    lifecycle = owning(tmp_path)
    assert lifecycle.begin_train(0, total_steps=10, start=start, writes=False) is None
    lifecycle.end_train(writes=False)
    lifecycle.finish(writes=False)
    assert events(tmp_path) == []  # the file is made, nothing is written
    first = lifecycle.run
    assert lifecycle.begin_train(0, total_steps=10, start=start) is not first  # the owned run ended


def test_what_the_adapter_holds_back_is_written_before_the_run_starts_and_the_phase_closes(tmp_path: Path) -> None:
    flushed: list[list[str]] = []
    lifecycle = owning(tmp_path, flush=lambda run: flushed.append(names(events(tmp_path)) if run.started else []))
    train(lifecycle, range(1, 2))
    lifecycle.end_train()
    assert flushed == [[], ["run.started", "phase.started", "train.step"]]


def test_only_rank_zero_watches_the_file_and_writes_the_stop(tmp_path: Path) -> None:
    run = Run(None, stdout=False, **QUIET)  # a run without an output directory
    zero = watched_stop(run, zero=True, directory=tmp_path)
    other = watched_stop(None, zero=False, directory=tmp_path)
    assert (zero.path, zero.run) == (tmp_path / STOP_FILE, run)
    assert (other.path, other.run) == (None, None)


def test_the_runs_after_an_owned_one_keep_its_options_but_not_its_id(tmp_path: Path) -> None:
    run, new_run = owned_run(tmp_path, run_id="first-run", file_name="stream.jsonl", **QUIET)
    later = new_run()
    assert run.run_id == "first-run" and later.run_id != "first-run"
    later.start(provenance=False)
    assert (tmp_path / "stream.jsonl").exists()


@pytest.mark.parametrize(
    "error, expected",
    [
        (RuntimeError("CUDA out of memory. Tried to allocate 2 GiB"), True),
        (MemoryError(), False),
        (ValueError("x"), False),
    ],
)
def test_out_of_memory_errors_are_told_by_type_or_message(error: BaseException, expected: bool) -> None:
    assert is_out_of_memory(error) is expected
