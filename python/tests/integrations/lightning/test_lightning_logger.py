"""The Lightning logger, alone and beside the callback, with a real `lightning.Trainer`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import lightning.pytorch as pl
import pytest
import torch
from support.example_scripts import load_example
from support.stream_files import stream_of

from trainwire.integrations.lightning import TrainwireCallback
from trainwire.integrations.lightning_logger import TrainwireLogger
from trainwire.reader.invariants import check_stream
from trainwire.stop import request_stop

example = load_example("lightning_train")


class LoggingRegression(example.TinyRegression):
    """The example's model, logging its training loss with `self.log`; `fail_at` raises there."""

    def __init__(self, fail_at: int | None = None) -> None:
        super().__init__()
        self.fail_at = fail_at

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        if self.fail_at is not None and self.global_step >= self.fail_at:
            raise RuntimeError("boom")
        loss = super().training_step(batch, batch_idx)
        self.log("train_loss", loss)
        return loss


def fit(tmp_path: Path, model: pl.LightningModule, max_steps: int, *callbacks: pl.Callback, **options: Any) -> None:
    logger = TrainwireLogger(tmp_path, step_interval_s=0, heartbeat_interval_s=None)
    trainer = example.trainer_for(
        str(tmp_path), max_steps, None, logger=logger, log_every_n_steps=2, callbacks=list(callbacks), **options
    )
    trainer.fit(model, example.loader(), example.loader(16, seed=1))


def test_the_logger_alone_writes_hyperparameters_logged_values_validation_and_checkpoints(tmp_path: Path) -> None:
    checkpoints = pl.callbacks.ModelCheckpoint(dirpath=tmp_path / "ckpt", every_n_train_steps=4, save_top_k=-1)
    fit(tmp_path, LoggingRegression(), 8, checkpoints, enable_checkpointing=True, val_check_interval=4)

    assert check_stream((tmp_path / "progress.jsonl").read_bytes()) == []
    stream = stream_of(tmp_path / "progress.jsonl")
    assert stream[0]["event"] == "run.started" and stream[0]["config"]["lr"] == 0.05
    assert stream[-1]["event"] == "run.finished" and stream[-1]["status"] == "succeeded"
    steps = [line for line in stream if line["event"] == "train.step"]
    assert [line["step"] for line in steps] == [2, 4, 6, 8]  # every log_every_n_steps
    assert all(line["loss"] > 0 for line in steps)
    assert [line["step"] for line in stream if line["event"] == "eval.completed"] == [4, 8]
    assert all("loss" in line["metrics"] for line in stream if line["event"] == "eval.completed")
    assert [line["step"] for line in stream if line["event"] == "checkpoint.saved"] == [4, 8]


def test_the_logger_alone_ends_a_failed_fit_failed(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="boom"):
        fit(tmp_path, LoggingRegression(fail_at=5), 20)
    stream = stream_of(tmp_path / "progress.jsonl")
    assert check_stream((tmp_path / "progress.jsonl").read_bytes()) == []
    assert (stream[-2]["event"], stream[-2]["status"]) == ("phase.ended", "failed")
    assert (stream[-1]["event"], stream[-1]["status"]) == ("run.finished", "failed")


def test_with_the_callback_both_write_one_run_every_step_with_the_logged_values(tmp_path: Path) -> None:
    callback = TrainwireCallback(check_interval_s=0)
    stopper = example_stop_at(3, tmp_path)
    fit(tmp_path, LoggingRegression(), 1000, stopper, callback)

    assert callback.run is not None and callback.run.exit_code == 2
    assert sorted(path.name for path in tmp_path.glob("*.jsonl")) == ["progress.jsonl"]
    stream = stream_of(tmp_path / "progress.jsonl")
    assert check_stream((tmp_path / "progress.jsonl").read_bytes()) == []
    assert len({line["run_id"] for line in stream}) == 1
    assert [line["event"] for line in stream].count("run.started") == 1
    assert stream[0]["config"]["lr"] == 0.05
    steps = [line for line in stream if line["event"] == "train.step"]
    assert [line["step"] for line in steps] == [1, 2, 3]  # every step: the callback writes them
    assert "train_loss" in steps[1]["metrics"]  # logged_metrics are filled: a logger is set
    saved = [line for line in stream if line["event"] == "checkpoint.saved"]
    assert [(line["step"], line["reason"]) for line in saved] == [(3, "stop")]
    assert (stream[-1]["status"], stream[-1]["reason"]) == ("interrupted", "control_file")


def example_stop_at(step: int, directory: Path) -> pl.Callback:
    class StopAt(pl.Callback):
        def on_train_batch_end(self, trainer: pl.Trainer, *args: Any) -> None:
            if trainer.global_step == step:
                request_stop(directory, reason="enough", requested_by="test")

    return StopAt()
