"""The transformers callback's evaluation and prediction loops as phases with per-batch
progress (contract 1.1 `phase.progress`), and the memory each reported step carries; real
`Trainer` runs on the tiny GPT-2 built from its config."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.stream_files import of
from support.trainer_streams import events
from transformers import TrainerCallback

from trainwire.cli.demo_model import build_trainer
from trainwire.integrations.transformers import attach
from trainwire.writer.run import Run


def phase_lines(stream: list[dict], phase: str) -> list[dict]:
    return [line for line in stream if line.get("phase") == phase and line["event"].startswith("phase.")]


def test_an_evaluation_during_training_is_a_nested_eval_phase_counting_its_batches(tmp_path: Path) -> None:
    # 48 evaluation examples at 16 a batch: 3 batches per evaluation, two evaluations
    trainer = build_trainer(tmp_path, max_steps=4, eval_strategy="steps", eval_steps=2, eval_size=48)
    attach(trainer, step_interval_s=0)
    trainer.train()
    stream = events(tmp_path / "progress.jsonl")
    names = [(line["event"], line.get("phase")) for line in stream if line["event"].startswith(("phase.", "eval."))]
    one_evaluation = [
        ("phase.started", "eval"),
        ("phase.progress", "eval"),
        ("phase.progress", "eval"),
        ("phase.progress", "eval"),
        ("eval.completed", None),
        ("phase.ended", "eval"),
    ]
    assert names == [("phase.started", "train"), *one_evaluation, *one_evaluation, ("phase.ended", "train")]
    progress = [line for line in stream if line["event"] == "phase.progress"][:3]
    assert [line["done"] for line in progress] == [1, 2, 3]
    assert all(line["total"] == 3 and line["unit"] == "batches" for line in progress)
    assert all(line["status"] == "ok" for line in of(stream, "phase.ended"))


def test_evaluate_and_predict_outside_training_are_runs_of_one_phase_each(tmp_path: Path) -> None:
    trainer = build_trainer(tmp_path, max_steps=2, eval_size=32)
    attach(trainer, step_interval_s=0)
    trainer.evaluate()
    trainer.predict(trainer.eval_dataset)
    stream = events(tmp_path / "progress.jsonl")
    evaluation, prediction = (
        [line for line in stream if line["run_id"] == run_id]
        for run_id in dict.fromkeys(line["run_id"] for line in stream)
    )
    assert [line["event"] for line in evaluation] == [
        "run.started",
        "phase.started",
        "phase.progress",
        "phase.progress",
        "eval.completed",
        "phase.ended",
        "run.finished",
    ]
    assert [line["event"] for line in prediction] == [
        "run.started",
        "phase.started",
        "phase.progress",
        "phase.progress",
        "phase.ended",
        "run.finished",
    ]
    assert phase_lines(prediction, "predict")[-1]["event"] == "phase.ended" and prediction[-1]["status"] == "succeeded"
    assert [line["total"] for line in prediction if line["event"] == "phase.progress"] == [2, 2]


class FailOnSecondBatch(TrainerCallback):
    def __init__(self) -> None:
        self.batches = 0

    def on_prediction_step(self, args, state, control, **kwargs) -> None:  # type: ignore[no-untyped-def]
        self.batches += 1
        if self.batches == 2:
            raise RuntimeError("the evaluation broke")


def test_an_evaluation_that_raises_ends_its_phase_failed(tmp_path: Path) -> None:
    trainer = build_trainer(tmp_path, max_steps=2, eval_size=48)
    with Run(tmp_path, step_interval_s=0) as run:
        run.start()
        attach(trainer, run)
        trainer.add_callback(FailOnSecondBatch())
        with pytest.raises(RuntimeError, match="the evaluation broke"):
            trainer.evaluate()
    stream = events(tmp_path / "progress.jsonl")
    ended = phase_lines(stream, "eval")[-1]
    assert ended["event"] == "phase.ended" and ended["status"] == "failed"
    assert stream[-1]["event"] == "run.finished" and stream[-1]["status"] == "succeeded"  # the caller's run


def test_each_reported_step_carries_the_process_memory(tmp_path: Path) -> None:
    trainer = build_trainer(tmp_path, max_steps=3, eval_size=0)
    attach(trainer, step_interval_s=0)
    trainer.train()
    steps = of(events(tmp_path / "progress.jsonl"), "train.step")
    assert len(steps) == 3
    for step in steps:  # no accelerator here: the process's peak resident memory
        assert set(step["memory"]) == {"cpu"}
        assert step["memory"]["cpu"]["peak_bytes"] > 10_000_000
        assert step["memory"]["cpu"]["allocated_bytes"] is None
