"""The transformers callback with real `Trainer` runs on a tiny GPT-2 (in this process)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from support.stream_files import of
from transformers import TrainerCallback

from trainwire.cli.demo_model import build_trainer
from trainwire.contract.models import EVENT_ADAPTER
from trainwire.integrations.transformers import CHECKPOINT_ORIGIN_FILE, TrainwireCallback, attach, checkpoint_origin
from trainwire.writer.run import Run


def events(path: Path) -> list[dict[str, Any]]:
    """Every line of the stream, each validated strictly against the contract."""
    lines = path.read_text(encoding="utf-8").splitlines()
    for line in lines:
        EVENT_ADAPTER.validate_json(line, strict=True)
    parsed = [json.loads(line) for line in lines]
    for run_id in {line["run_id"] for line in parsed}:
        seqs = [line["seq"] for line in parsed if line["run_id"] == run_id]
        assert seqs == list(range(1, len(seqs) + 1))
    return parsed


class RaiseAtStep(TrainerCallback):
    def __init__(self, step: int) -> None:
        self.step = step

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if state.global_step == self.step:
            raise ValueError(f"broken batch at step {self.step}")


def test_every_event_maps_with_the_trainers_values(tmp_path: Path) -> None:
    trainer = build_trainer(
        tmp_path, max_steps=36, eval_strategy="steps", eval_steps=12, save_strategy="steps", save_steps=18,
        hub_token="hf_secret_value",
    )  # fmt: skip
    callback = attach(trainer, step_interval_s=0)
    trainer.train()
    stream = events(tmp_path / "progress.jsonl")

    started = stream[0]
    assert started["event"] == "run.started"
    assert started["total_steps"] == 36 and started["world_size"] == 1
    assert started["config"]["max_steps"] == 36
    assert started["config"]["hub_token"] == "<redacted>"
    assert "resumed_from" not in started
    assert [line["event"] for line in stream[1:2]] == ["phase.started"] and stream[1]["phase"] == "train"

    logged = [entry for entry in trainer.state.log_history if "loss" in entry]
    steps = of(stream, "train.step")
    assert [line["step"] for line in steps] == [entry["step"] for entry in logged] == list(range(1, 37))
    for line, entry in zip(steps, logged, strict=False):
        assert line["loss"] == pytest.approx(entry["loss"])
        assert line["learning_rate"] == pytest.approx(entry["learning_rate"])
        assert line["grad_norm"] == pytest.approx(entry["grad_norm"])
        assert line["epoch"] == pytest.approx(entry["epoch"])
        assert line["total_steps"] == 36
    assert steps[-1]["progress"] == 1.0 and steps[-1]["eta_s"] == 0.0

    # 128 examples / batch 8 = 16 steps per epoch
    assert [(line["epoch"], line["step"]) for line in of(stream, "train.epoch")] == [(1, 16), (2, 32)]
    evaluations = of(stream, "eval.completed")
    assert [line["step"] for line in evaluations] == [12, 24, 36]
    expected_eval = [entry for entry in trainer.state.log_history if "eval_loss" in entry]
    for line, entry in zip(evaluations, expected_eval, strict=False):
        assert line["split"] == "eval"
        assert line["metrics"]["loss"] == pytest.approx(entry["eval_loss"])
        assert not any(key.startswith("eval_") or key == "epoch" for key in line["metrics"])

    checkpoints = of(stream, "checkpoint.saved")
    assert [(line["step"], line["path"], line["reason"]) for line in checkpoints] == [
        (18, "checkpoint-18", "periodic"),
        (36, "checkpoint-36", "periodic"),
    ]
    run_id = started["run_id"]
    assert json.loads((tmp_path / "checkpoint-18" / CHECKPOINT_ORIGIN_FILE).read_text()) == {
        "run_id": run_id,
        "step": 18,
    }

    # each evaluation is an `eval` phase nested in `train`
    evaluations = len(of(stream, "eval.completed"))
    assert evaluations > 0
    assert [(line["phase"], line["status"]) for line in of(stream, "phase.ended")] == [("eval", "ok")] * evaluations + [
        ("train", "ok")
    ]
    finished = stream[-1]
    assert finished["event"] == "run.finished" and finished["status"] == "succeeded" and finished["step"] == 36
    assert len(of(stream, "run.finished")) == 1
    assert not callback.stopped
    callback.raise_if_stopped()  # nothing to raise


def test_logs_without_loss_are_not_steps_but_every_step_is_written(tmp_path: Path) -> None:
    # Logging only at the end leaves on_log with the eval dict and the train summary.
    trainer = build_trainer(tmp_path, max_steps=8, logging_strategy="no", eval_strategy="steps", eval_steps=4)
    attach(trainer, step_interval_s=0)
    trainer.train()
    stream = events(tmp_path / "progress.jsonl")
    steps = of(stream, "train.step")
    assert [line["step"] for line in steps] == list(range(1, 9))
    assert all(line["loss"] is None and line["learning_rate"] > 0 for line in steps)
    assert len(of(stream, "eval.completed")) == 2
    assert stream[-1]["step"] == 8


def test_custom_logged_values_travel_as_metrics(tmp_path: Path) -> None:
    class LogExtra(TrainerCallback):
        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kw: Any) -> None:
            if logs is not None and "loss" in logs:
                logs["perplexity"] = 2.0 ** logs["loss"]

    trainer = build_trainer(tmp_path, max_steps=3)
    trainer.add_callback(LogExtra())  # runs before the trainwire callback added below
    attach(trainer, step_interval_s=0)
    trainer.train()
    steps = of(events(tmp_path / "progress.jsonl"), "train.step")
    assert all(line["metrics"]["perplexity"] == pytest.approx(2.0 ** line["loss"]) for line in steps)


def test_a_training_that_raises_ends_the_owned_run_failed(tmp_path: Path) -> None:
    trainer = build_trainer(tmp_path, max_steps=20)
    trainer.add_callback(RaiseAtStep(5))
    attach(trainer, step_interval_s=0)
    with pytest.raises(ValueError, match="broken batch"):
        trainer.train()
    stream = events(tmp_path / "progress.jsonl")
    assert [(line["phase"], line["status"]) for line in of(stream, "phase.ended")] == [("train", "failed")]
    finished = stream[-1]
    assert finished["event"] == "run.finished" and finished["status"] == "failed" and finished["exit_code"] == 1
    assert finished["error"] == {"type": "ValueError", "message": "broken batch at step 5"}


def test_a_training_that_raises_inside_the_callers_run(tmp_path: Path) -> None:
    with pytest.raises(ValueError), Run(tmp_path, step_interval_s=0) as run:
        run.start(total_steps=20, provenance=False)
        trainer = build_trainer(tmp_path, max_steps=20)
        trainer.add_callback(RaiseAtStep(3))
        attach(trainer, run)
        trainer.train()
    stream = events(tmp_path / "progress.jsonl")
    assert [(line["phase"], line["status"]) for line in of(stream, "phase.ended")] == [("train", "failed")]
    assert stream[-1]["status"] == "failed" and stream[-1]["error"]["type"] == "ValueError"
    assert len(of(stream, "run.started")) == 1  # the caller's run is not started twice


def test_a_callers_run_that_was_not_started_is_started_by_the_callback(tmp_path: Path) -> None:
    with Run(tmp_path, step_interval_s=0, heartbeat_interval_s=None) as run:
        trainer = build_trainer(tmp_path, max_steps=6)
        attach(trainer, run)
        trainer.train()
        assert run.status is None  # the caller's run: the callback does not finish it
    stream = events(tmp_path / "progress.jsonl")
    assert [line["event"] for line in stream[:2]] == ["run.started", "phase.started"]
    assert stream[0]["total_steps"] == 6
    assert stream[-1]["event"] == "run.finished" and stream[-1]["status"] == "succeeded"


def test_reattach_after_a_reset_and_a_rebuilt_trainer(tmp_path: Path) -> None:
    with Run(tmp_path, step_interval_s=0) as run:
        run.start(total_steps=None, provenance=False)
        first = build_trainer(tmp_path, max_steps=4)
        callback = attach(first, run)
        # Like TRL's GRPO path: the callback list is replaced before training.
        first.callback_handler.callbacks = [
            cb for cb in first.callback_handler.callbacks if not isinstance(cb, TrainwireCallback)
        ]
        assert attach(first, callback=callback) is callback
        assert attach(first, callback=callback) is callback  # idempotent
        assert sum(isinstance(cb, TrainwireCallback) for cb in first.callback_handler.callbacks) == 1
        first.train()

        second = build_trainer(tmp_path, max_steps=3)  # a rebuilt trainer starts at step 0 again
        callback.attach(second)
        second.train()
    stream = events(tmp_path / "progress.jsonl")
    assert [line["step"] for line in of(stream, "train.step")] == [1, 2, 3, 4, 1, 2, 3]
    restarted = of(stream, "train.restarted")
    assert [(line["reason"], line["attempt"], line["previous_step"], line["step"]) for line in restarted] == [
        ("other", 2, 4, 0)
    ]
    order = [line["event"] for line in stream]
    assert order.index("train.restarted") < [i for i, line in enumerate(stream) if line.get("step") == 1][1]
    assert [line["status"] for line in of(stream, "phase.ended")] == ["ok", "ok"]
    assert stream[-1]["status"] == "succeeded"


def test_a_second_attach_replaces_the_first_callback(tmp_path: Path) -> None:
    trainer = build_trainer(tmp_path, max_steps=2)
    first = attach(trainer, step_interval_s=0)
    second = attach(trainer, Run(tmp_path / "other", step_interval_s=0), stop=False)
    callbacks = [cb for cb in trainer.callback_handler.callbacks if isinstance(cb, TrainwireCallback)]
    assert callbacks == [second] and first is not second


def test_resume_in_process_reports_where_it_came_from(tmp_path: Path) -> None:
    first = build_trainer(tmp_path, max_steps=12, save_strategy="steps", save_steps=6)
    original = attach(first, step_interval_s=0)
    first.train()
    original_id = events(tmp_path / "progress.jsonl")[0]["run_id"]
    assert original.run is not None and original.run.run_id == original_id

    resumed = build_trainer(tmp_path, max_steps=12, save_strategy="steps", save_steps=6)
    attach(resumed, step_interval_s=0)
    resumed.train(resume_from_checkpoint=str(tmp_path / "checkpoint-6"))
    stream = events(tmp_path / "progress.jsonl")
    second = [line for line in stream if line["run_id"] != original_id]
    assert second[0]["event"] == "run.started"
    assert second[0]["resumed_from"] == {"run_id": original_id, "checkpoint": "checkpoint-6", "step": 6}
    steps = of(second, "train.step")
    assert [line["step"] for line in steps] == list(range(7, 13))
    # The ETA counts this session only: its first step report (7) starts the clock, and
    # the restored steps 1-6 never count as done in no time.
    assert steps[0]["eta_s"] is None and steps[0]["elapsed_s"] == 0.0
    for line in steps[1:]:
        done = line["step"] - 7
        assert line["eta_s"] == pytest.approx(line["elapsed_s"] * (12 - line["step"]) / done, abs=1e-5)
    assert second[-1]["status"] == "succeeded"


def test_checkpoint_origin_without_the_file(tmp_path: Path) -> None:
    directory = tmp_path / "checkpoint-40"
    directory.mkdir()
    assert checkpoint_origin(directory) == {"run_id": None, "checkpoint": str(directory), "step": 40}


def test_a_failing_run_never_breaks_training(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    class BrokenRun:
        def __getattr__(self, name: str) -> Any:
            raise RuntimeError("broken bookkeeping")

    trainer = build_trainer(
        tmp_path, max_steps=4, eval_strategy="steps", eval_steps=2, save_strategy="steps", save_steps=2
    )
    TrainwireCallback(BrokenRun(), owns_run=True).attach(trainer)  # type: ignore[arg-type]
    with caplog.at_level(logging.WARNING, logger="trainwire.integrations.transformers"):
        trainer.train()
    assert trainer.state.global_step == 4
    # Each failing hook is reported once, however often it fails, then left alone.
    failed = [record.getMessage().split()[1] for record in caplog.records]
    assert len(failed) == len(set(failed))
    assert {"on_evaluate", "on_save", "on_train_begin", "on_train_end"} <= set(failed)
