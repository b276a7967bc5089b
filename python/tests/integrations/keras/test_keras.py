"""The Keras 3 callback with a real `model.fit` (torch backend, CPU) on a tiny model."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("KERAS_BACKEND", "torch")  # before keras is imported

import keras
from support.example_scripts import EXAMPLES, load_example
from support.stopped_processes import signalled_after_step
from support.stream_files import stream_of

from trainwire.integrations.keras import attach
from trainwire.reader.invariants import check_stream
from trainwire.stop import request_stop
from trainwire.writer.run import Run

EXAMPLE = EXAMPLES / "keras_train.py"


example = load_example("keras_train")


class AtStep(keras.callbacks.Callback):
    """Runs `action` once, at the end of the batch that makes optimizer step `step`."""

    def __init__(self, step: int, action: Any) -> None:
        super().__init__()
        self.step, self.action, self.done = step, action, False

    def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
        if int(keras.ops.convert_to_numpy(self.model.optimizer.iterations)) >= self.step and not self.done:
            self.done = True
            self.action()


def fit(model: keras.Model, epochs: int, *callbacks: keras.callbacks.Callback, validation: bool = False) -> None:
    inputs, targets = example.data()
    model.fit(
        inputs,
        targets,
        batch_size=8,
        epochs=epochs,
        validation_data=example.data(16, seed=1) if validation else None,
        callbacks=list(callbacks),
        verbose=0,
    )


def events(stream: list[dict[str, Any]]) -> list[str]:
    return [line["event"] for line in stream]


def test_a_fit_writes_steps_epochs_validation_and_model_checkpoints(tmp_path: Path) -> None:
    model = example.tiny_model()
    callback = attach(model, output_dir=tmp_path, step_interval_s=0, heartbeat_interval_s=None)
    checkpoints = keras.callbacks.ModelCheckpoint(
        str(tmp_path / "ckpt" / "epoch-{epoch}.weights.h5"), save_weights_only=True
    )
    fit(model, 2, checkpoints, validation=True)

    raw = (tmp_path / "progress.jsonl").read_bytes()
    assert check_stream(raw) == []
    stream = stream_of(tmp_path / "progress.jsonl")
    assert events(stream)[:2] == ["run.started", "phase.started"]
    assert events(stream)[-2:] == ["phase.ended", "run.finished"] and stream[-1]["status"] == "succeeded"
    assert stream[0]["total_steps"] == 16 and stream[0]["config"]["optimizer"]["name"] == "sgd"
    steps = [line for line in stream if line["event"] == "train.step"]
    assert [line["step"] for line in steps] == list(range(1, 17))
    assert all(line["loss"] > 0 and "mae" in line["metrics"] for line in steps)
    assert steps[7]["epoch"] == 1.0 and steps[0]["learning_rate"] == pytest.approx(0.05)
    assert [(line["epoch"], line["step"]) for line in stream if line["event"] == "train.epoch"] == [(1, 8), (2, 16)]
    evals = [line for line in stream if line["event"] == "eval.completed"]
    assert [(line["step"], line["split"], sorted(line["metrics"])) for line in evals] == [
        (8, "validation", ["loss", "mae"]),
        (16, "validation", ["loss", "mae"]),
    ]
    saved = [(line["step"], line["path"], line["reason"]) for line in stream if line["event"] == "checkpoint.saved"]
    assert saved == [(8, "ckpt/epoch-1.weights.h5", "periodic"), (16, "ckpt/epoch-2.weights.h5", "periodic")]
    assert callback.run is not None and callback.run.exit_code == 0


def test_a_control_file_stops_after_the_step_with_a_checkpoint(tmp_path: Path) -> None:
    model = example.tiny_model()
    callback = attach(model, output_dir=tmp_path, step_interval_s=0, heartbeat_interval_s=None, check_interval_s=0)
    fit(model, 50, AtStep(3, lambda: request_stop(tmp_path, reason="enough", requested_by="test")))

    assert callback.stopped and callback.run is not None and callback.run.exit_code == 2
    stream = stream_of(tmp_path / "progress.jsonl")
    assert check_stream((tmp_path / "progress.jsonl").read_bytes()) == []
    assert events(stream)[-5:] == ["train.step", "stop.requested", "checkpoint.saved", "phase.ended", "run.finished"]
    stop, saved, ended, finished = stream[-4:]
    assert (stop["source"], stop["reason"]) == ("control_file", "enough")
    assert (saved["step"], saved["reason"], saved["path"]) == (3, "stop", "checkpoints/stop-step=3.keras")
    assert keras.models.load_model(tmp_path / saved["path"]) is not None
    assert ended["status"] == "interrupted"
    assert (finished["status"], finished["reason"], finished["checkpoint"]) == (
        "interrupted",
        "control_file",
        saved["path"],
    )
    assert "train.epoch" not in events(stream)  # the stopped epoch is not a completed one


@pytest.mark.parametrize(
    ("error", "status", "phase_status"),
    [(RuntimeError("boom"), "failed", "failed"), (KeyboardInterrupt(), "interrupted", "interrupted")],
)
def test_an_exception_out_of_fit_ends_the_run(
    tmp_path: Path, error: BaseException, status: str, phase_status: str
) -> None:
    model = example.tiny_model()
    attach(model, output_dir=tmp_path, step_interval_s=0, heartbeat_interval_s=None)

    def throw() -> None:
        raise error

    with pytest.raises(type(error)):
        fit(model, 5, AtStep(2, throw))
    stream = stream_of(tmp_path / "progress.jsonl")
    assert check_stream((tmp_path / "progress.jsonl").read_bytes()) == []
    assert [line["status"] for line in stream if line["event"] == "phase.ended"] == [phase_status]
    assert stream[-1]["event"] == "run.finished" and stream[-1]["status"] == status


def test_sigterm_to_the_example_saves_a_checkpoint_and_exits_2(tmp_path: Path) -> None:
    stream_path = tmp_path / "progress.jsonl"
    command = [sys.executable, str(EXAMPLE), str(tmp_path), "--epochs", "1000", "--step-delay", "0.02"]
    returncode, stderr = signalled_after_step(command, stream_path, 3)
    assert returncode == 2, stderr[-4000:]
    stream = stream_of(stream_path)
    assert check_stream(stream_path.read_bytes()) == []
    assert [(line["source"], line["signal"]) for line in stream if line["event"] == "stop.requested"] == [
        ("signal", "SIGTERM")
    ]
    saved = [line for line in stream if line["event"] == "checkpoint.saved"]
    assert len(saved) == 1 and saved[0]["reason"] == "stop" and (tmp_path / saved[0]["path"]).is_file()
    assert (stream[-1]["status"], stream[-1]["reason"], stream[-1]["exit_code"]) == ("interrupted", "sigterm", 2)
    assert not (tmp_path / "final.keras").exists()  # nothing after the stop ran


def test_validation_evaluate_and_predict_count_their_batches_and_steps_carry_memory(tmp_path: Path) -> None:
    model = example.tiny_model()
    with Run(tmp_path, step_interval_s=0, heartbeat_interval_s=None) as run:
        run.start()
        callback = attach(model, run)
        fit(model, 1, validation=True)  # 16 validation items at 8 a batch: 2 batches
        inputs, targets = example.data(24, seed=2)
        model.evaluate(inputs, targets, batch_size=8, callbacks=[callback], verbose=0)
        model.predict(inputs, batch_size=8, callbacks=[callback], verbose=0)
    stream = stream_of(tmp_path / "progress.jsonl")
    assert check_stream((tmp_path / "progress.jsonl").read_bytes()) == []
    loops = [
        (line["event"], line["phase"], line.get("done"), line.get("total"))
        for line in stream
        if line["event"].startswith("phase.") and line["phase"] != "train"
    ]
    assert loops == [
        ("phase.started", "eval", None, None),
        ("phase.progress", "eval", 1, 2),
        ("phase.progress", "eval", 2, 2),
        ("phase.ended", "eval", None, None),
        ("phase.started", "eval", None, None),
        ("phase.progress", "eval", 1, 3),
        ("phase.progress", "eval", 2, 3),
        ("phase.progress", "eval", 3, 3),
        ("phase.ended", "eval", None, None),
        ("phase.started", "predict", None, None),
        ("phase.progress", "predict", 1, 3),
        ("phase.progress", "predict", 2, 3),
        ("phase.progress", "predict", 3, 3),
        ("phase.ended", "predict", None, None),
    ]
    steps = [line for line in stream if line["event"] == "train.step"]
    assert len(steps) == 8
    for step in steps:  # no accelerator here: the process's peak resident memory
        assert set(step["memory"]) == {"cpu"} and step["memory"]["cpu"]["peak_bytes"] > 10_000_000
