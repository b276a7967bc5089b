"""The Lightning callback with a real `lightning.Trainer` on a tiny CPU model."""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import Any

import lightning.pytorch as pl
import pytest
import torch
from support.example_scripts import EXAMPLES, load_example
from support.stopped_processes import signalled_after_step
from support.stream_files import stream_of

from trainwire import Run
from trainwire.integrations.lightning import CHECKPOINT_KEY, TrainwireCallback
from trainwire.reader.invariants import check_stream
from trainwire.stop import request_stop

EXAMPLE = EXAMPLES / "lightning_train.py"


example = load_example("lightning_train")


def events(stream: list[dict[str, Any]]) -> list[str]:
    return [line["event"] for line in stream]


class AtStep(pl.Callback):
    """Runs `action` once, at the end of the batch that makes global step `step`."""

    def __init__(self, step: int, action: Any) -> None:
        self.step, self.action, self.done = step, action, False

    def on_train_batch_end(self, trainer: pl.Trainer, *args: Any) -> None:
        if trainer.global_step >= self.step and not self.done:
            self.done = True
            self.action()


def test_a_fit_writes_steps_epochs_validation_and_checkpoints(tmp_path: Path) -> None:
    callback = TrainwireCallback(step_interval_s=0, heartbeat_interval_s=None)
    checkpoints = pl.callbacks.ModelCheckpoint(dirpath=tmp_path / "ckpt", every_n_train_steps=4, save_top_k=-1)
    trainer = example.trainer_for(
        str(tmp_path), 12, callback, enable_checkpointing=True, callbacks=[callback, checkpoints], val_check_interval=4
    )
    trainer.fit(example.TinyRegression(), example.loader(), example.loader(16, seed=1))

    raw = (tmp_path / "progress.jsonl").read_bytes()
    assert check_stream(raw) == []
    stream = stream_of(tmp_path / "progress.jsonl")
    names = events(stream)
    assert names[:2] == ["run.started", "phase.started"] and names[-2:] == ["phase.ended", "run.finished"]
    assert stream[0]["total_steps"] == 12 and stream[0]["config"] == {"lr": 0.05, "step_delay_s": 0.0}
    steps = [line for line in stream if line["event"] == "train.step"]
    assert [line["step"] for line in steps] == list(range(1, 13))
    assert all(line["loss"] is not None and line["learning_rate"] == 0.05 for line in steps)
    assert steps[7]["epoch"] == 1.0  # 8 batches per epoch
    assert [(line["epoch"], line["step"]) for line in stream if line["event"] == "train.epoch"] == [(1, 8)]
    evals = [line for line in stream if line["event"] == "eval.completed"]
    assert [line["step"] for line in evals] == [4, 8, 12] and all("loss" in line["metrics"] for line in evals)
    saved = [(line["step"], line["path"], line["reason"]) for line in stream if line["event"] == "checkpoint.saved"]
    assert [step for step, _, _ in saved] == [4, 8, 12] and all(reason == "periodic" for *_, reason in saved)
    assert all((tmp_path / path).is_file() for _, path, _ in saved)
    assert torch.load(tmp_path / saved[0][1], weights_only=False)[CHECKPOINT_KEY] == {
        "run_id": stream[0]["run_id"],
        "step": 4,
    }
    assert (stream[-1]["status"], stream[-1]["exit_code"], stream[-1]["step"]) == ("succeeded", 0, 12)
    # each validation (16 samples at 8 a batch) is an `eval` phase counting its 2 batches, the
    # sanity check's batches are not; each step carries the process's peak resident memory
    loops = [
        (line["event"], line.get("done"), line.get("total"))
        for line in stream
        if line.get("phase") == "eval" or line["event"] == "eval.completed"
    ]
    one = [("phase.started", None, None), ("phase.progress", 1, 2), ("phase.progress", 2, 2)]
    one += [("eval.completed", None, None), ("phase.ended", None, None)]
    assert loops == one * 3
    assert all(line["memory"]["cpu"]["peak_bytes"] > 0 for line in steps)


def test_a_control_file_stops_after_the_step_with_one_checkpoint(tmp_path: Path) -> None:
    callback = TrainwireCallback(step_interval_s=0, heartbeat_interval_s=None, check_interval_s=0)
    stopper = AtStep(3, lambda: request_stop(tmp_path, reason="enough", requested_by="test"))
    trainer = example.trainer_for(str(tmp_path), 1000, callback, callbacks=[stopper, callback])
    trainer.fit(example.TinyRegression(), example.loader())

    assert callback.stopped and callback.run is not None and callback.run.exit_code == 2
    stream = stream_of(tmp_path / "progress.jsonl")
    assert check_stream((tmp_path / "progress.jsonl").read_bytes()) == []
    assert events(stream)[-5:] == ["train.step", "stop.requested", "checkpoint.saved", "phase.ended", "run.finished"]
    stop, saved, ended, finished = stream[-4:]
    assert (stop["source"], stop["reason"], stop["requested_by"]) == ("control_file", "enough", "test")
    assert (saved["step"], saved["reason"], saved["path"]) == (3, "stop", "checkpoints/stop-step=3.ckpt")
    assert (tmp_path / saved["path"]).is_file()
    assert ended["status"] == "interrupted"
    assert (finished["status"], finished["reason"], finished["step"], finished["exit_code"]) == (
        "interrupted",
        "control_file",
        3,
        2,
    )
    assert trainer.global_step == 3
    with pytest.raises(Exception, match="control_file"):
        callback.raise_if_stopped()


def test_without_trainwire_handlers_lightnings_sigterm_ends_the_run_interrupted(tmp_path: Path) -> None:
    # Lightning's own handler: it raises SIGTERMException after the batch, no checkpoint.
    previous = signal.getsignal(signal.SIGTERM)
    callback = TrainwireCallback(step_interval_s=0, heartbeat_interval_s=None)
    killer = AtStep(2, lambda: signal.raise_signal(signal.SIGTERM))
    trainer = example.trainer_for(str(tmp_path), 1000, callback, callbacks=[killer, callback])
    with pytest.raises(SystemExit):
        trainer.fit(example.TinyRegression(), example.loader())
    assert signal.getsignal(signal.SIGTERM) == previous  # Lightning put the handler back

    stream = stream_of(tmp_path / "progress.jsonl")
    assert check_stream((tmp_path / "progress.jsonl").read_bytes()) == []
    assert "checkpoint.saved" not in events(stream)
    stops = [line for line in stream if line["event"] == "stop.requested"]
    assert [(line["source"], line["signal"]) for line in stops] == [("signal", "SIGTERM")]
    assert (stream[-1]["status"], stream[-1]["reason"], stream[-1]["exit_code"]) == ("interrupted", "sigterm", 2)


def test_an_out_of_memory_fit_followed_by_a_smaller_one_is_a_restart(tmp_path: Path) -> None:
    class RunsOutOfMemory(example.TinyRegression):
        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            if self.global_step == 2:
                raise torch.OutOfMemoryError("CUDA out of memory (simulated)")
            return super().training_step(batch, batch_idx)

    with Run(tmp_path, step_interval_s=0, heartbeat_interval_s=None) as run:
        callback = TrainwireCallback(run)
        with pytest.raises(torch.OutOfMemoryError):
            example.trainer_for(str(tmp_path), 4, callback).fit(RunsOutOfMemory(), example.loader())
        example.trainer_for(str(tmp_path), 4, callback).fit(example.TinyRegression(), example.loader())

    stream = stream_of(tmp_path / "progress.jsonl")
    assert check_stream((tmp_path / "progress.jsonl").read_bytes()) == []
    phases = [(line["phase"], line["status"]) for line in stream if line["event"] == "phase.ended"]
    assert phases == [("train", "failed"), ("train", "ok")]
    restarts = [line for line in stream if line["event"] == "train.restarted"]
    assert [(line["reason"], line["attempt"], line["previous_step"], line["step"]) for line in restarts] == [
        ("oom", 2, 2, 0)
    ]
    assert [line["step"] for line in stream if line["event"] == "train.step"] == [1, 2, 1, 2, 3, 4]
    assert (stream[-1]["status"], stream[-1]["step"]) == ("succeeded", 4)


def test_a_fit_in_each_trial_of_a_search_is_the_trials_training_not_a_restart(tmp_path: Path) -> None:
    with Run(tmp_path, step_interval_s=0, heartbeat_interval_s=None) as run:
        callback = TrainwireCallback(run)
        for trial in (1, 2):
            with run.trial(trial, {"lr": 0.1 * trial}):
                example.trainer_for(str(tmp_path), 3, callback).fit(example.TinyRegression(), example.loader())

    assert check_stream((tmp_path / "progress.jsonl").read_bytes()) == []
    stream = stream_of(tmp_path / "progress.jsonl")
    assert "train.restarted" not in events(stream)
    steps = [(line["trial"], line["step"]) for line in stream if line["event"] == "train.step"]
    assert steps == [(trial, step) for trial in (1, 2) for step in (1, 2, 3)]


def test_a_fit_after_the_owned_run_ended_is_a_new_run_in_the_same_file(tmp_path: Path) -> None:
    callback = TrainwireCallback(step_interval_s=0, heartbeat_interval_s=None, check_interval_s=0)
    stopper = AtStep(3, lambda: request_stop(tmp_path))
    example.trainer_for(str(tmp_path), 1000, callback, callbacks=[stopper, callback]).fit(
        example.TinyRegression(), example.loader()
    )
    first = callback.run
    example.trainer_for(str(tmp_path), 4, callback).fit(example.TinyRegression(), example.loader())
    second = callback.run

    assert first is not None and second is not None and first.run_id != second.run_id
    assert check_stream((tmp_path / "progress.jsonl").read_bytes()) == []
    stream = stream_of(tmp_path / "progress.jsonl")
    finished = [(line["run_id"], line["status"], line["step"]) for line in stream if line["event"] == "run.finished"]
    assert finished == [(first.run_id, "interrupted", 3), (second.run_id, "succeeded", 4)]
    assert not callback.stopped  # the stop was the first run's


def test_sigterm_to_the_example_saves_a_checkpoint_and_exits_2(tmp_path: Path) -> None:
    stream_path = tmp_path / "progress.jsonl"
    command = [sys.executable, str(EXAMPLE), str(tmp_path), "--max-steps", "100000", "--step-delay", "0.02"]
    returncode, stderr = signalled_after_step(command, stream_path, 3)
    assert returncode == 2, stderr[-4000:]
    stream = stream_of(stream_path)
    assert check_stream(stream_path.read_bytes()) == []
    stops = [(line["source"], line["signal"]) for line in stream if line["event"] == "stop.requested"]
    assert stops == [("signal", "SIGTERM")]
    saved = [line for line in stream if line["event"] == "checkpoint.saved"]
    assert len(saved) == 1 and saved[0]["reason"] == "stop" and (tmp_path / saved[0]["path"]).is_file()
    finished = stream[-1]
    assert (finished["status"], finished["reason"], finished["step"]) == ("interrupted", "sigterm", saved[0]["step"])
    assert not (tmp_path / "final.ckpt").exists()  # nothing after the stop ran
