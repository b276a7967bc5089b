"""Keras' generic callback behaviours, held over the built-in `CSVLogger` and trainwire's
`TrainwireCallback` (torch backend, CPU).

Follows `keras/src/callbacks/csv_logger_test.py` and `callback_test.py` of Keras (the index's
snapshots nearest the tested 3.15.1), written anew in their style: each test runs a fit (or
evaluate, predict) with each logger and reads back what it wrote, the CSV rows or the stream's
lines; the same epochs, values and stops must be there. What trainwire does differently on
purpose is in docs/integrations.md.
"""

from __future__ import annotations

import csv
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "torch")  # before keras is imported

import keras
from support.stream_files import stream_of

from trainwire.integrations.keras import TrainwireCallback
from trainwire.reader.invariants import check_stream

LOGGERS = ["csv", "trainwire"]
SAMPLES, INPUT_DIM, BATCH_SIZE = 10, 3, 4


def data(seed: int = 1337) -> tuple[np.ndarray, np.ndarray]:
    generator = np.random.default_rng(seed)
    return generator.random((SAMPLES, INPUT_DIM)), generator.random((SAMPLES, 1))


def make_model() -> keras.Model:
    keras.utils.set_random_seed(1337)
    model = keras.Sequential(
        [keras.Input((INPUT_DIM,)), keras.layers.Dense(2, activation="relu"), keras.layers.Dense(1)]
    )
    model.compile(loss="mse", optimizer="sgd", metrics=["mse"])
    return model


def made_logger(kind: str, directory: Path, **options: Any) -> keras.callbacks.Callback:
    if kind == "csv":
        return keras.callbacks.CSVLogger(str(directory / "log.csv"), **options)
    return TrainwireCallback(output_dir=directory, step_interval_s=0, heartbeat_interval_s=None)


def epochs_written(kind: str, directory: Path) -> list[list[dict[str, Any]]]:
    """Per fit, the values of each epoch as the logger wrote them (its own file read back)."""
    if kind == "csv":
        with open(directory / "log.csv", newline="") as file:
            rows = list(csv.DictReader(file))
        return [[{name: value for name, value in row.items() if value != "NA"} for row in rows]]
    path = directory / "progress.jsonl"
    assert check_stream(path.read_bytes()) == []
    runs: dict[str, dict[int, dict[str, Any]]] = {}
    for line in stream_of(path):
        epochs = runs.setdefault(line["run_id"], {})
        if line["event"] == "train.epoch":
            epochs.setdefault(line["epoch"], {}).update(line.get("metrics", {}))
        elif line["event"] == "eval.completed":  # written just before its epoch's train.epoch
            values = {f"val_{name}": value for name, value in line["metrics"].items()}
            epochs.setdefault(line["epoch"], {}).update(values)
    return [[values for _, values in sorted(epochs.items())] for epochs in runs.values()]


def fit(model: keras.Model, callbacks: list[Any], **options: Any) -> keras.callbacks.History:
    inputs, targets = data()
    validation = data(7)
    settings = {"batch_size": BATCH_SIZE, "validation_data": validation, "epochs": 1, "verbose": 0}
    return model.fit(inputs, targets, callbacks=callbacks, **{**settings, **options})


@pytest.mark.parametrize("kind", LOGGERS)
def test_a_fit_then_a_reused_logger_append(tmp_path: Path, kind: str) -> None:
    fit(make_model(), [made_logger(kind, tmp_path)])
    reused = [made_logger(kind, tmp_path, append=True) if kind == "csv" else made_logger(kind, tmp_path)]
    model = make_model()
    fit(model, reused)
    fit(model, reused, epochs=2)  # the same logger object again

    written = epochs_written(kind, tmp_path)
    counted = [len(each) for each in written]
    # CSV appends every epoch to one table; trainwire writes one run per fit in one file
    assert counted == ([4] if kind == "csv" else [1, 1, 2])
    assert all("loss" in epoch and "val_loss" in epoch for each in written for epoch in each)


@pytest.mark.parametrize("kind", LOGGERS)
def test_validation_loss_is_written_at_the_validation_frequency(tmp_path: Path, kind: str) -> None:
    history = fit(make_model(), [made_logger(kind, tmp_path)], validation_freq=3, epochs=5)
    (epochs,) = epochs_written(kind, tmp_path)
    assert [("val_loss" in epoch) for epoch in epochs] == [False, False, True, False, False]
    assert float(epochs[2]["val_loss"]) == pytest.approx(history.history["val_loss"][0], rel=1e-6)


@pytest.mark.parametrize("kind", LOGGERS)
def test_stop_training_by_terminate_on_nan_leaves_a_valid_log(tmp_path: Path, kind: str) -> None:
    keras.utils.set_random_seed(1337)
    model = keras.Sequential([keras.Input((INPUT_DIM,))])
    for _ in range(5):
        model.add(keras.layers.Dense(2, activation="relu", kernel_initializer=keras.initializers.Constant(1e5)))
    model.add(keras.layers.Dense(2))
    model.compile(loss="mean_squared_error", optimizer="sgd")
    inputs = np.random.default_rng(0).random((SAMPLES, INPUT_DIM))
    targets = keras.utils.to_categorical(np.arange(SAMPLES) % 2, 2)
    history = model.fit(
        inputs, targets, batch_size=BATCH_SIZE, epochs=20, verbose=0,
        callbacks=[keras.callbacks.TerminateOnNaN(), made_logger(kind, tmp_path)],
    )  # fmt: skip
    loss = history.history["loss"]
    assert len(loss) == 1 and not math.isfinite(loss[0])
    if kind == "csv":
        with open(tmp_path / "log.csv") as file:
            assert {"nan", "inf"} & set([row for row in csv.reader(file) if row][-1])
    else:  # the stream stays valid and the run ends with the fit
        stream = stream_of(tmp_path / "progress.jsonl")
        assert check_stream((tmp_path / "progress.jsonl").read_bytes()) == []
        assert (stream[-1]["event"], stream[-1]["status"]) == ("run.finished", "succeeded")


@pytest.mark.parametrize("kind", LOGGERS)
def test_model_stop_training_set_by_another_callback_ends_the_fit(tmp_path: Path, kind: str) -> None:
    class StopAtSecondBatch(keras.callbacks.Callback):
        def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
            if batch == 1:
                self.model.stop_training = True

    history = fit(make_model(), [StopAtSecondBatch(), made_logger(kind, tmp_path)], epochs=5)
    assert len(history.history["loss"]) == 1
    (epochs,) = epochs_written(kind, tmp_path)
    assert len(epochs) == 1  # Keras ends that epoch (its values are the logs of its batches)
    if kind == "trainwire":
        stream = stream_of(tmp_path / "progress.jsonl")
        assert [line["step"] for line in stream if line["event"] == "train.step"] == [1, 2]
        assert stream[-1]["status"] == "succeeded"


@pytest.mark.parametrize("kind", LOGGERS)
def test_evaluate_and_predict_with_the_logger_give_what_they_give_without(tmp_path: Path, kind: str) -> None:
    model = make_model()
    inputs, targets = data()
    logger = made_logger(kind, tmp_path)
    assert model.evaluate(inputs, targets, verbose=0, callbacks=[logger]) == model.evaluate(inputs, targets, verbose=0)
    predicted = model.predict(inputs, verbose=0, callbacks=[logger])
    np.testing.assert_allclose(predicted, model.predict(inputs, verbose=0))
    # neither logger writes an evaluation outside fit without a run of the caller's (the
    # trainwire callback's run opens its file when the callback is made: it stays empty)
    assert not (tmp_path / "log.csv").exists()
    assert not (tmp_path / "progress.jsonl").exists() or (tmp_path / "progress.jsonl").stat().st_size == 0


def test_several_loggers_in_one_fit_write_the_same_epochs(tmp_path: Path) -> None:
    history = fit(
        make_model(), [made_logger("csv", tmp_path), made_logger("trainwire", tmp_path), keras.callbacks.History()],
        epochs=3,
    )  # fmt: skip
    (rows,) = epochs_written("csv", tmp_path)
    (epochs,) = epochs_written("trainwire", tmp_path)
    for name in ("loss", "mse", "val_loss"):
        assert [float(row[name]) for row in rows] == pytest.approx([epoch[name] for epoch in epochs], rel=1e-6)
        assert [epoch[name] for epoch in epochs] == pytest.approx(history.history[name], rel=1e-6)


def test_the_model_state_is_current_at_each_batch_end(tmp_path: Path) -> None:
    class Iterations(keras.callbacks.Callback):
        def __init__(self) -> None:
            super().__init__()
            self.seen: list[tuple[int, int]] = []

        def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
            self.seen.append((batch, int(keras.ops.convert_to_numpy(self.model.optimizer.iterations))))

    checker = Iterations()
    fit(make_model(), [checker, made_logger("trainwire", tmp_path)], validation_data=None)
    steps = [line["step"] for line in stream_of(tmp_path / "progress.jsonl") if line["event"] == "train.step"]
    assert checker.seen == [(batch, batch + 1) for batch in range(3)]
    assert steps == [iterations for _, iterations in checker.seen]  # trainwire's step is the optimizer's
