"""`Trainer(callbacks=[TrainwireCallback])`: transformers makes the callback with no
arguments, and it then owns its run as `attach()` makes it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.stream_files import stream_of
from transformers import Trainer, TrainerCallback, TrainingArguments

from trainwire.cli.demo_model import CharDataset, build_model, synthetic_corpus
from trainwire.integrations.transformers import TrainwireCallback
from trainwire.reader.invariants import check_stream


class RaiseAtStep(TrainerCallback):
    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if state.global_step == 2:
            raise ValueError("broken batch")


def built(tmp_path: Path, *callbacks: Any) -> Trainer:
    arguments = TrainingArguments(
        output_dir=str(tmp_path), max_steps=3, per_device_train_batch_size=8, logging_steps=1,
        save_strategy="no", report_to="none", disable_tqdm=True, use_cpu=True,
    )  # fmt: skip
    corpus = synthetic_corpus(40)
    return Trainer(
        model=build_model(),
        args=arguments,
        train_dataset=CharDataset(corpus[:32]),
        eval_dataset=CharDataset(corpus[32:]),
        callbacks=list(callbacks),
    )


def test_a_callback_passed_by_class_owns_a_run_in_the_output_directory(tmp_path: Path) -> None:
    trainer = built(tmp_path, TrainwireCallback)
    trainer.train()
    trainer.evaluate()

    callback = next(cb for cb in trainer.callback_handler.callbacks if isinstance(cb, TrainwireCallback))
    path = tmp_path / "progress.jsonl"
    assert check_stream(path.read_bytes()) == []
    stream = stream_of(path)
    finished = [line for line in stream if line["event"] == "run.finished"]
    assert [line["status"] for line in finished] == ["succeeded", "succeeded"]  # train(), then evaluate()
    steps = [line["step"] for line in stream if line["event"] == "train.step"]
    assert steps[0] == 1 and steps[-1] == 3  # the run's default throttle may keep step 2 in its journal only
    assert callback.owns_run and callback.stop is not None


def test_a_training_that_raises_ends_the_run_of_a_callback_passed_by_class_failed(tmp_path: Path) -> None:
    trainer = built(tmp_path, TrainwireCallback, RaiseAtStep)
    with pytest.raises(ValueError, match="broken batch"):
        trainer.train()

    path = tmp_path / "progress.jsonl"
    assert check_stream(path.read_bytes()) == []
    last = stream_of(path)[-1]
    assert (last["event"], last["status"]) == ("run.finished", "failed")
