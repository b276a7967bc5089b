"""Per-step progress with the trainer's logging settings: every step written once, with its loss when logged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from support.stream_files import of
from support.trainer_streams import events, plain_trainer

from trainwire.integrations.transformers import attach

torch.set_num_threads(1)  # a model this small only contends for the shared cores


def logged_losses(trainer: Any) -> dict[int, float]:
    return {entry["step"]: entry["loss"] for entry in trainer.state.log_history if "loss" in entry}


def test_default_training_arguments_write_every_step(tmp_path: Path) -> None:
    # logging_steps=500: the trainer never logs a loss in this 48-step run.
    trainer = plain_trainer(tmp_path)
    attach(trainer, step_interval_s=0)
    trainer.train()
    stream = events(tmp_path / "progress.jsonl")
    steps = of(stream, "train.step")
    assert [line["step"] for line in steps] == list(range(1, 49))
    assert all(line["loss"] is None and line["total_steps"] == 48 for line in steps)
    assert steps[0]["eta_s"] is None and steps[-1]["eta_s"] == 0.0 and steps[-1]["progress"] == 1.0
    assert [line["epoch"] for line in steps][15::16] == pytest.approx([1.0, 2.0, 3.0])
    assert all(line["learning_rate"] > 0 for line in steps)
    assert [(line["epoch"], line["step"]) for line in of(stream, "train.epoch")] == [(1, 16), (2, 32), (3, 48)]
    assert stream[-1]["event"] == "run.finished" and stream[-1]["step"] == 48


def test_default_throttle_writes_the_first_and_the_last_step(tmp_path: Path) -> None:
    trainer = plain_trainer(tmp_path)
    attach(trainer)  # step_interval_s at its default
    trainer.train()
    stream = events(tmp_path / "progress.jsonl")
    written = [line["step"] for line in of(stream, "train.step")]
    assert written[0] == 1 and written[-1] == 48 and written == sorted(set(written))
    assert stream[-1]["step"] == 48


def test_logging_every_step_writes_each_step_once_with_its_loss(tmp_path: Path) -> None:
    trainer = plain_trainer(tmp_path, max_steps=12, logging_steps=1)
    attach(trainer, step_interval_s=0)
    trainer.train()
    steps = of(events(tmp_path / "progress.jsonl"), "train.step")
    losses = logged_losses(trainer)
    assert [line["step"] for line in steps] == list(range(1, 13))
    assert [line["loss"] for line in steps] == pytest.approx([losses[step] for step in range(1, 13)])
    rates = [entry["learning_rate"] for entry in trainer.state.log_history if "loss" in entry]
    assert [line["learning_rate"] for line in steps] == pytest.approx(rates)


def test_logging_every_fifth_step_keeps_the_rate_the_trainer_logs(tmp_path: Path) -> None:
    trainer = plain_trainer(tmp_path, max_steps=12, logging_steps=5)
    attach(trainer, step_interval_s=0)
    trainer.train()
    steps = of(events(tmp_path / "progress.jsonl"), "train.step")
    assert [line["step"] for line in steps] == list(range(1, 13))
    assert {line["step"]: line["loss"] for line in steps if line["loss"] is not None} == pytest.approx(
        logged_losses(trainer)
    )
    logged_rates = {entry["step"]: entry["learning_rate"] for entry in trainer.state.log_history if "loss" in entry}
    assert {line["step"]: line["learning_rate"] for line in steps if line["step"] in logged_rates} == pytest.approx(
        logged_rates
    )


def test_epoch_logging_writes_each_step_once_and_the_epoch_after_its_step(tmp_path: Path) -> None:
    # The epoch's log comes after on_epoch_end: its last step waits for it.
    trainer = plain_trainer(tmp_path, logging_strategy="epoch")
    attach(trainer, step_interval_s=0)
    trainer.train()
    stream = events(tmp_path / "progress.jsonl")
    steps = of(stream, "train.step")
    assert [line["step"] for line in steps] == list(range(1, 49))
    losses = logged_losses(trainer)
    assert sorted(losses) == [16, 32, 48]
    assert {line["step"]: line["loss"] for line in steps if line["loss"] is not None} == pytest.approx(losses)
    order = [(line["event"], line.get("step")) for line in stream]
    for epoch, step in ((1, 16), (2, 32), (3, 48)):
        assert order.index(("train.step", step)) + 1 == order.index(("train.epoch", step))
        assert of(stream, "train.epoch")[epoch - 1]["metrics"]["loss"] == pytest.approx(losses[step])
    assert stream[-1]["step"] == 48
