"""Cooperative stop of a real `Trainer`: in this process, then in `trainwire demo train` subprocesses."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.paths import SCRIPTS
from support.stream_files import of
from support.stream_files import stream_of as events
from transformers import TrainerCallback

from trainwire.cli.demo_model import build_trainer
from trainwire.contract.errors import RunInterrupted
from trainwire.integrations.transformers import attach
from trainwire.stop import STOP_FILE, process_start_time, request_stop

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX signals")
PROCESS_TIMEOUT_S = 180  # generous: the machine is shared; a hang still ends the test


def wait_for(path: Path, found: Callable[[list[dict[str, Any]]], bool], process: subprocess.Popen[Any]) -> None:
    deadline = time.monotonic() + PROCESS_TIMEOUT_S
    while not found(events(path)):
        assert process.poll() is None, f"the process ended early ({process.returncode})"
        assert time.monotonic() < deadline, "timed out waiting for the stream"
        time.sleep(0.05)


class AtStep(TrainerCallback):
    """Calls `action` once when training reaches `step` (runs before the trainwire callback)."""

    def __init__(self, step: int, action: Callable[[], object], hook: str = "on_step_end") -> None:
        self.step, self.action, self.done = step, action, False
        setattr(self, hook, self._maybe_act)

    def _maybe_act(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if state.global_step == self.step and not self.done:
            self.done = True
            self.action()


def assert_stopped_at(stream: list[dict[str, Any]], output_dir: Path, step: int, reason: str) -> None:
    assert len(of(stream, "stop.requested")) == 1
    assert [(line["step"], line["path"], line["reason"]) for line in of(stream, "checkpoint.saved")][-1] == (
        step,
        f"checkpoint-{step}",
        "stop",
    )
    assert (output_dir / f"checkpoint-{step}" / "model.safetensors").is_file()
    assert of(stream, "train.step")[-1]["step"] == step
    assert ("train", "interrupted") in [(line["phase"], line["status"]) for line in of(stream, "phase.ended")]
    finished = stream[-1]
    assert finished["event"] == "run.finished"
    assert (finished["status"], finished["reason"], finished["exit_code"], finished["step"]) == (
        "interrupted",
        reason,
        2,
        step,
    )
    assert finished["checkpoint"] == f"checkpoint-{step}"  # the stop checkpoint, to resume from


# -- in this process ----------------------------------------------------------------------


def test_a_stop_from_code_saves_and_ends_interrupted(tmp_path: Path) -> None:
    trainer = build_trainer(tmp_path, max_steps=40)
    callback_box: list[Any] = []
    trainer.add_callback(AtStep(7, lambda: callback_box[0].stop.request(reason="enough", requested_by="test")))
    callback = attach(trainer, step_interval_s=0)
    callback_box.append(callback)
    trainer.train()  # returns normally after a stop

    assert trainer.state.global_step == 7 and callback.stopped
    with pytest.raises(RunInterrupted) as raised:
        callback.raise_if_stopped()
    assert raised.value.reason == "api"
    stream = events(tmp_path / "progress.jsonl")
    stop = of(stream, "stop.requested")[0]
    assert (stop["source"], stop["signal"], stop["reason"], stop["requested_by"]) == ("api", None, "enough", "test")
    assert_stopped_at(stream, tmp_path, 7, "api")


def test_a_control_file_stops_at_the_next_step(tmp_path: Path) -> None:
    trainer = build_trainer(tmp_path, max_steps=40)
    trainer.add_callback(AtStep(5, lambda: request_stop(tmp_path, reason="from a file")))
    attach(trainer, step_interval_s=0, check_interval_s=0)
    trainer.train()
    stream = events(tmp_path / "progress.jsonl")
    assert of(stream, "stop.requested")[0]["source"] == "control_file"
    assert_stopped_at(stream, tmp_path, 5, "control_file")
    assert not (tmp_path / STOP_FILE).exists()


def test_a_stop_during_evaluation_is_honoured_when_it_ends(tmp_path: Path) -> None:
    trainer = build_trainer(tmp_path, max_steps=40, eval_strategy="steps", eval_steps=10)
    # Created while the evaluation at step 10 runs (between two of its batches).
    trainer.add_callback(AtStep(10, lambda: request_stop(tmp_path), hook="on_prediction_step"))
    attach(trainer, step_interval_s=0, check_interval_s=0)
    trainer.train()
    stream = events(tmp_path / "progress.jsonl")
    order = [line["event"] for line in stream]
    assert [line["step"] for line in of(stream, "eval.completed")] == [10]  # the evaluation finished
    assert order.index("stop.requested") < order.index("checkpoint.saved")
    assert_stopped_at(stream, tmp_path, 10, "control_file")


@posix_only
def test_signals_from_attach_stop_the_owned_run_and_are_removed_after(tmp_path: Path) -> None:
    before = signal.getsignal(signal.SIGTERM)
    trainer = build_trainer(tmp_path, max_steps=40)
    during: list[object] = []
    trainer.add_callback(AtStep(2, lambda: during.append(signal.getsignal(signal.SIGTERM))))
    trainer.add_callback(AtStep(4, lambda: os.kill(os.getpid(), signal.SIGTERM)))
    callback = attach(trainer, step_interval_s=0, signals=True)
    assert signal.getsignal(signal.SIGTERM) is before  # installed only once the loop runs
    trainer.train()
    assert during and during[0] is not before
    assert signal.getsignal(signal.SIGTERM) is before
    stream = events(tmp_path / "progress.jsonl")
    assert [(line["source"], line["signal"]) for line in of(stream, "stop.requested")] == [("signal", "SIGTERM")]
    assert_stopped_at(stream, tmp_path, 4, "sigterm")
    assert callback.stopped


def test_a_stale_file_does_not_stop_the_next_run(tmp_path: Path) -> None:
    left_over = request_stop(tmp_path, reason="left over from the last run")
    then = process_start_time() - 60
    os.utime(left_over, (then, then))
    trainer = build_trainer(tmp_path, max_steps=5)
    callback = attach(trainer, step_interval_s=0, check_interval_s=0)
    trainer.train()
    assert not callback.stopped and trainer.state.global_step == 5
    assert events(tmp_path / "progress.jsonl")[-1]["status"] == "succeeded"


# -- subprocesses: the demo training, exit codes and signals --------------------------------


@pytest.fixture
def spawn() -> Iterator[Callable[..., subprocess.Popen[bytes]]]:
    """Starts subprocesses (stderr captured) and kills any still alive when the test ends."""
    started: list[subprocess.Popen[bytes]] = []

    def start(*command: str) -> subprocess.Popen[bytes]:
        process = subprocess.Popen([sys.executable, *command], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        started.append(process)
        return process

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
        process.communicate()


def demo_train(
    spawn: Callable[..., subprocess.Popen[bytes]], output_dir: Path, *options: str
) -> subprocess.Popen[bytes]:
    return spawn("-m", "trainwire.cli.demo", "train", "--output-dir", str(output_dir), *options)


def finish(process: subprocess.Popen[bytes]) -> int:
    """Waits for the process (killed after the timeout) and returns its exit code."""
    try:
        _, stderr = process.communicate(timeout=PROCESS_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        _, stderr = process.communicate()
    sys.stderr.write((stderr or b"").decode(errors="replace")[-4000:])  # shown when the test fails
    return process.returncode


def training_started(stream: list[dict[str, Any]]) -> bool:
    return bool(of(stream, "train.step"))


SLOW = ("--steps", "2000", "--step-delay", "0.05", "--eval-every", "0", "--save-every", "0")


def test_the_demo_stops_by_control_file_then_resumes(tmp_path: Path, spawn: Callable[..., Any]) -> None:
    stream_path = tmp_path / "progress.jsonl"
    process = demo_train(spawn, tmp_path, *SLOW)
    wait_for(stream_path, training_started, process)
    request_stop(tmp_path, reason="ci budget", requested_by="pytest")
    assert finish(process) == 2

    stream = events(stream_path)
    stop = of(stream, "stop.requested")[0]
    assert (stop["source"], stop["reason"], stop["requested_by"]) == ("control_file", "ci budget", "pytest")
    step = of(stream, "checkpoint.saved")[-1]["step"]
    assert_stopped_at(stream, tmp_path, step, "control_file")
    assert "save" not in [line["phase"] for line in of(stream, "phase.started")]
    assert not (tmp_path / "model").exists()  # a stopped run promotes no model
    first_run = stream[0]["run_id"]

    # Resume from the stop checkpoint in a new process: the stream goes on in the same file.
    resumed = demo_train(
        spawn, tmp_path, "--resume", "--steps", str(step + 6), "--step-delay", "0", "--eval-every", "0"
    )
    assert finish(resumed) == 0
    second = [line for line in events(stream_path) if line["run_id"] != first_run]
    assert second[0]["resumed_from"] == {"run_id": first_run, "checkpoint": f"checkpoint-{step}", "step": step}
    steps = of(second, "train.step")
    assert steps[0]["step"] == step + 1 and steps[-1]["step"] == step + 6
    assert steps[0]["eta_s"] is None  # this session's first step: no restored steps in the ETA
    assert second[-1]["status"] == "succeeded" and (tmp_path / "model").is_dir()


@posix_only
def test_the_demo_stops_on_sigterm(tmp_path: Path, spawn: Callable[..., Any]) -> None:
    stream_path = tmp_path / "progress.jsonl"
    process = demo_train(spawn, tmp_path, *SLOW)
    wait_for(stream_path, training_started, process)
    process.send_signal(signal.SIGTERM)
    assert finish(process) == 2
    stream = events(stream_path)
    stop = of(stream, "stop.requested")[0]
    assert (stop["source"], stop["signal"]) == ("signal", "SIGTERM")
    assert_stopped_at(stream, tmp_path, of(stream, "checkpoint.saved")[-1]["step"], "sigterm")
    assert not (tmp_path / "model").exists()


@posix_only
def test_a_second_sigterm_kills_the_hard_way(tmp_path: Path, spawn: Callable[..., Any]) -> None:
    stream_path = tmp_path / "progress.jsonl"
    process = spawn(str(SCRIPTS / "train_slow_save.py"), str(tmp_path))
    wait_for(stream_path, training_started, process)
    process.send_signal(signal.SIGTERM)
    # The stop is honoured and the checkpoint save (a minute long) has begun.
    wait_for(stream_path, lambda stream: bool(of(stream, "stop.requested")), process)
    process.send_signal(signal.SIGTERM)
    assert finish(process) == -signal.SIGTERM
    stream = events(stream_path)
    assert of(stream, "run.finished") == []  # a hard kill writes nothing; readers infer it
