"""transformers' generic callback behaviours, held over a built-in `TrainerCallback` and
trainwire's `TrainwireCallback`, by instance and by class.

Follows `tests/trainer/test_trainer_callback.py` of transformers (the snapshot at commit
020a37d2, the nearest to the tested 5.24.0 available), written anew in its style with a
tiny regression model: registration (at init and later, by class and by instance, removal,
pop, the duplicate warning), the event flow (a recorder sees the same events beside either),
a callback stopping training, and stateful callbacks across `resume_from_checkpoint`. What
trainwire does differently on purpose is in docs/integrations.md.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
import torch
from support.stream_files import stream_of
from transformers import (
    EarlyStoppingCallback,
    PrinterCallback,
    ProgressCallback,
    Trainer,
    TrainerCallback,
    TrainingArguments,
)
from transformers.trainer import DEFAULT_CALLBACKS
from transformers.trainer_callback import ExportableState

from trainwire.integrations.transformers import TrainwireCallback, attach
from trainwire.reader.invariants import check_stream

#: the built-in every trainwire case is held against, by class and by instance
BUILT_IN = PrinterCallback
CASES = ["builtin-class", "builtin-instance", "trainwire-class", "trainwire-instance"]


class Regression(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(2, 1)

    def forward(self, x: torch.Tensor, labels: torch.Tensor) -> dict[str, torch.Tensor]:
        prediction = self.linear(x).squeeze(-1)
        return {"loss": torch.nn.functional.mse_loss(prediction, labels), "logits": prediction}


def dataset(length: int = 64) -> list[dict[str, torch.Tensor]]:
    generator = torch.Generator().manual_seed(0)
    inputs = torch.randn(length, 2, generator=generator)
    return [{"x": x, "labels": 2 * x[0] + 3} for x in inputs]


def make_trainer(tmp_path: Path, callbacks: list[Any] | None = None, **arguments: Any) -> Trainer:
    settings: dict[str, Any] = dict(
        per_device_train_batch_size=8, per_device_eval_batch_size=8, num_train_epochs=1, report_to="none",
        use_cpu=True, disable_tqdm=False, save_strategy="no", logging_steps=1,
    )  # fmt: skip
    args = TrainingArguments(str(tmp_path), **{**settings, **arguments})
    return Trainer(Regression(), args, train_dataset=dataset(), eval_dataset=dataset(16), callbacks=callbacks)


def callback_of(case: str) -> Any:
    kind = BUILT_IN if case.startswith("builtin") else TrainwireCallback
    return kind if case.endswith("class") else kind()


def kind_of(case: str) -> type[TrainerCallback]:
    return BUILT_IN if case.startswith("builtin") else TrainwireCallback


def names(callbacks: list[Any]) -> list[str]:
    return sorted((each if isinstance(each, type) else type(each)).__name__ for each in callbacks)


def found(trainer: Trainer, kind: type[Any]) -> Any:
    return next((each for each in trainer.callback_handler.callbacks if isinstance(each, kind)), None)


def finished_runs(directory: Path) -> list[dict[str, Any]]:
    path = directory / "progress.jsonl"
    assert check_stream(path.read_bytes()) == []
    return [line for line in stream_of(path) if line["event"] == "run.finished"]


@pytest.mark.parametrize("case", CASES)
def test_custom_callback_added_at_init(tmp_path: Path, case: str) -> None:
    trainer = make_trainer(tmp_path, callbacks=[callback_of(case)])
    assert names(trainer.callback_handler.callbacks) == names([*DEFAULT_CALLBACKS, ProgressCallback, kind_of(case)])
    trainer.train()
    if case.startswith("trainwire"):
        assert [line["status"] for line in finished_runs(tmp_path)] == ["succeeded"]


@pytest.mark.parametrize("case", CASES)
def test_add_remove_and_pop_callback(tmp_path: Path, case: str) -> None:
    trainer = make_trainer(tmp_path)
    count = len(trainer.callback_handler.callbacks)
    given = callback_of(case)
    trainer.add_callback(given)
    assert len(trainer.callback_handler.callbacks) == count + 1
    added = found(trainer, kind_of(case))
    assert added is given if case.endswith("instance") else isinstance(added, given)
    trainer.remove_callback(kind_of(case))
    assert found(trainer, kind_of(case)) is None
    trainer.add_callback(added)
    assert trainer.pop_callback(kind_of(case)) is added


@pytest.mark.parametrize("kind", [BUILT_IN, TrainwireCallback])
def test_duplicate_callback_warning(tmp_path: Path, kind: type[Any], caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        trainer = make_trainer(tmp_path, callbacks=[kind, kind])
    assert kind.__name__ in caplog.text  # transformers warns of the second one
    if kind is TrainwireCallback:  # and trainwire writes one run, not two interleaved
        trainer.train()
        assert len({line["run_id"] for line in stream_of(tmp_path / "progress.jsonl")}) == 1
        assert "a second TrainwireCallback" in caplog.text


class EventRecorder(TrainerCallback):
    """Every event it is given, in order."""

    def __init__(self) -> None:
        self.events: list[str] = []

    def __getattribute__(self, name: str) -> Any:
        if name.startswith("on_"):
            self_events = object.__getattribute__(self, "events")
            return lambda *args, **kwargs: self_events.append(name)
        return object.__getattribute__(self, name)


FLOWS = [
    {},
    {"logging_steps": 5},
    {"save_strategy": "steps", "save_steps": 5},
    {"eval_strategy": "steps", "eval_steps": 5},
    {"eval_strategy": "epoch"},
    {"logging_steps": 3, "save_strategy": "steps", "save_steps": 10, "eval_steps": 5, "eval_strategy": "steps"},
]


@pytest.mark.parametrize("flow", FLOWS, ids=lambda flow: "-".join(f"{k}={v}" for k, v in flow.items()) or "default")
def test_event_flow_is_the_same_beside_a_built_in_and_trainwire(tmp_path: Path, flow: dict[str, Any]) -> None:
    seen = {}
    for case in ("builtin-class", "trainwire-class"):
        recorder = EventRecorder()
        trainer = make_trainer(tmp_path / case, callbacks=[callback_of(case), recorder], **flow)
        trainer.train()
        seen[case] = recorder.events
    assert seen["builtin-class"] == seen["trainwire-class"]
    assert seen["builtin-class"][:2] == ["on_init_end", "on_train_begin"]
    assert [line["status"] for line in finished_runs(tmp_path / "trainwire-class")] == ["succeeded"]


class StopAfter(TrainerCallback):
    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        if state.global_step >= 1:
            control.should_training_stop = True
        return control


@pytest.mark.parametrize("case", CASES)
def test_callback_can_stop_training(tmp_path: Path, case: str) -> None:
    trainer = make_trainer(tmp_path, callbacks=[callback_of(case), StopAfter()], max_steps=10)
    trainer.train()
    assert trainer.state.global_step == 1
    if case.startswith("trainwire"):  # another callback's stop is the training's end, not trainwire's stop
        assert [(line["status"], line["step"]) for line in finished_runs(tmp_path)] == [("succeeded", 1)]


class Stateful(TrainerCallback, ExportableState):
    def __init__(self, my_value: str = "default") -> None:
        self.my_value = my_value

    def state(self) -> dict[str, Any]:
        return {"args": {"my_value": self.my_value}, "attributes": {}}


RESUMING = {
    "save_strategy": "steps", "eval_strategy": "steps", "save_steps": 2, "eval_steps": 2, "max_steps": 2,
    "load_best_model_at_end": True,
}  # fmt: skip


@pytest.mark.parametrize("case", ["trainwire-class", "trainwire-instance", "attach"])
def test_stateful_callbacks_persist_across_resume_beside_trainwire(tmp_path: Path, case: str) -> None:
    def trainer_with(*stateful: Any, **arguments: Any) -> Trainer:
        trainwire = [] if case == "attach" else [callback_of(case)]
        trainer = make_trainer(tmp_path, callbacks=[*stateful, *trainwire], **RESUMING, **arguments)
        if case == "attach":
            attach(trainer)
        return trainer

    trainer_with(Stateful("first"), EarlyStoppingCallback(early_stopping_patience=5)).train()
    resumed = trainer_with(Stateful(), EarlyStoppingCallback(), restore_callback_states_from_checkpoint=True)
    resumed.train(resume_from_checkpoint=str(tmp_path / "checkpoint-2"))

    assert found(resumed, Stateful).my_value == "first"
    assert found(resumed, EarlyStoppingCallback).early_stopping_patience == 5
    stream = stream_of(tmp_path / "progress.jsonl")
    first, second = (line for line in stream if line["event"] == "run.started")
    assert second["resumed_from"]["run_id"] == first["run_id"]
    assert [line["status"] for line in finished_runs(tmp_path)] == ["succeeded", "succeeded"]
