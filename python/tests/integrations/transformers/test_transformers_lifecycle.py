"""What the callback does around the loop: the signal window, early stop files, later train() and evaluate() calls."""

from __future__ import annotations

import functools
import logging
import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.stream_files import of
from support.trainer_streams import events, runs
from transformers import TrainerCallback

from trainwire.cli.demo_model import build_model, build_trainer
from trainwire.contract.errors import RunInterrupted
from trainwire.integrations.transformers import TrainwireCallback, attach
from trainwire.stop import request_stop

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX signals")


class At(TrainerCallback):
    """Calls `action` in `hook` once training reached `step`."""

    def __init__(self, hook: str, step: int, action: Callable[[], object]) -> None:
        self.step, self.action, self.done = step, action, False
        setattr(self, hook, self._maybe_act)

    def _maybe_act(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if state.global_step >= self.step and not self.done:
            self.done = True
            self.action()


@posix_only
def test_a_callback_removed_from_the_trainer_leaves_signals_alone(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    received: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda number, frame: received.append(number))
    try:
        trainer = build_trainer(tmp_path, max_steps=6)
        attach(trainer, step_interval_s=0, signals=True)
        trainer.add_callback(At("on_step_end", 3, lambda: os.kill(os.getpid(), signal.SIGTERM)))
        # A user (or a library) replaces the callback list: the trainwire callback is gone.
        trainer.callback_handler.callbacks = [
            cb for cb in trainer.callback_handler.callbacks if not isinstance(cb, TrainwireCallback)
        ]
        with caplog.at_level(logging.WARNING, logger="trainwire.integrations.transformers"):
            trainer.train()
            trainer.train()
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert received == [signal.SIGTERM]  # the process's own handler got it, nothing swallowed it
    assert trainer.state.global_step == 6
    warnings = [
        record.getMessage() for record in caplog.records if "not in trainer.callback_handler" in record.getMessage()
    ]
    assert len(warnings) == 1


@posix_only
def test_a_signal_after_the_last_step_end_is_honoured_not_swallowed(tmp_path: Path) -> None:
    before = signal.getsignal(signal.SIGTERM)
    trainer = build_trainer(tmp_path, max_steps=4)
    trainer.add_callback(At("on_train_end", 4, lambda: os.kill(os.getpid(), signal.SIGTERM)))
    callback = attach(trainer, step_interval_s=0, signals=True)
    trainer.train()
    assert signal.getsignal(signal.SIGTERM) is before
    with pytest.raises(RunInterrupted):
        callback.raise_if_stopped()
    stream = events(tmp_path / "progress.jsonl")
    assert [(line["source"], line["signal"]) for line in of(stream, "stop.requested")] == [("signal", "SIGTERM")]
    assert (stream[-1]["status"], stream[-1]["reason"], stream[-1]["step"]) == ("interrupted", "sigterm", 4)


def test_a_stop_file_written_while_the_model_loads_is_honoured(tmp_path: Path) -> None:
    # Written after this process started, before attach(): a request for this run.
    request_stop(tmp_path, reason="changed my mind")
    trainer = build_trainer(tmp_path, max_steps=20)
    callback = attach(trainer, step_interval_s=0, check_interval_s=0)
    trainer.train()
    assert callback.stopped and trainer.state.global_step == 1
    stream = events(tmp_path / "progress.jsonl")
    assert of(stream, "stop.requested")[0]["reason"] == "changed my mind"
    assert (stream[-1]["status"], stream[-1]["checkpoint"]) == ("interrupted", "checkpoint-1")


def test_a_second_train_resuming_is_a_new_run(tmp_path: Path) -> None:
    trainer = build_trainer(tmp_path, max_steps=6, save_strategy="steps", save_steps=3)
    callback = attach(trainer, step_interval_s=0)
    trainer.train()
    trainer.train(resume_from_checkpoint=str(tmp_path / "checkpoint-3"))
    first, second = runs(events(tmp_path / "progress.jsonl"))
    assert first[-1]["status"] == "succeeded" and first[-1]["step"] == 6
    assert second[0]["event"] == "run.started"
    assert second[0]["resumed_from"] == {"run_id": first[0]["run_id"], "checkpoint": "checkpoint-3", "step": 3}
    assert [line["step"] for line in of(second, "train.step")] == [4, 5, 6]
    assert second[-1]["status"] == "succeeded"
    assert callback.run is not None and callback.run.run_id == second[0]["run_id"]


def test_a_second_train_after_a_stop_runs_to_the_end_in_a_new_run(tmp_path: Path) -> None:
    trainer = build_trainer(tmp_path, max_steps=8)
    callback = attach(trainer, step_interval_s=0)
    trainer.add_callback(At("on_step_end", 2, lambda: callback.stop.request(reason="pause")))  # type: ignore[union-attr]
    trainer.train()
    assert callback.stopped
    trainer.train(resume_from_checkpoint=str(tmp_path / "checkpoint-2"))
    assert not callback.stopped
    first, second = runs(events(tmp_path / "progress.jsonl"))
    assert (first[-1]["status"], first[-1]["checkpoint"]) == ("interrupted", "checkpoint-2")
    assert of(second, "stop.requested") == [] and second[-1]["status"] == "succeeded" and second[-1]["step"] == 8


def oom_at_forward(count: int) -> Any:
    model = build_model()
    original, calls = model.forward, [0]

    @functools.wraps(original)  # the trainer reads forward's signature to pick the columns
    def forward(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] == count:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return original(*args, **kwargs)

    model.forward = forward  # type: ignore[method-assign]
    return model


def test_a_trainer_rebuilt_after_oom_writes_a_new_run(tmp_path: Path) -> None:
    first = build_trainer(tmp_path, model=oom_at_forward(3), max_steps=5, per_device_train_batch_size=16)
    callback = attach(first, step_interval_s=0)
    with pytest.raises(RuntimeError, match="out of memory"):
        first.train()
    rebuilt = build_trainer(tmp_path, max_steps=5, per_device_train_batch_size=8)
    attach(rebuilt, callback=callback)
    rebuilt.train()
    failed, retried = runs(events(tmp_path / "progress.jsonl"))
    assert failed[-1]["status"] == "failed" and "out of memory" in failed[-1]["error"]["message"]
    assert failed[-1]["step"] == 2
    assert retried[0]["event"] == "run.started" and retried[0]["config"]["per_device_train_batch_size"] == 8
    assert [line["step"] for line in of(retried, "train.step")] == [1, 2, 3, 4, 5]
    assert retried[-1]["status"] == "succeeded"


def test_evaluate_after_the_run_finished_is_a_run_of_one_eval_phase(tmp_path: Path) -> None:
    trainer = build_trainer(tmp_path, max_steps=3)
    attach(trainer, step_interval_s=0)
    trainer.train()
    metrics = trainer.evaluate()
    trained, evaluated = runs(events(tmp_path / "progress.jsonl"))
    assert trained[-1]["status"] == "succeeded"
    # 32 evaluation examples at 16 a batch: two batches counted in the phase
    assert [line["event"] for line in evaluated] == [
        "run.started", "phase.started", "phase.progress", "phase.progress", "eval.completed", "phase.ended", "run.finished"
    ]  # fmt: skip
    assert evaluated[1]["phase"] == "eval" and evaluated[5]["status"] == "ok"
    assert evaluated[0]["total_steps"] is None and "resumed_from" not in evaluated[0]
    assert evaluated[4]["step"] == 3 and evaluated[4]["metrics"]["loss"] == pytest.approx(metrics["eval_loss"])
    assert evaluated[-1]["status"] == "succeeded"
