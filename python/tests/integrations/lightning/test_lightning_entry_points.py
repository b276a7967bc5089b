"""Every Lightning entry point (fit, validate, test, predict) with the callback or the logger
is a whole run; the logger is placed, copied and pickled as the built-in loggers are; one
trainwire callback writes per trainer."""

from __future__ import annotations

import copy
import logging
import pickle
from pathlib import Path
from typing import Any

import lightning.pytorch as pl
import pytest
import torch
from support.example_scripts import load_example
from support.stream_files import stream_of

from trainwire.integrations.lightning import TrainwireCallback, TrainwireLogger
from trainwire.reader.invariants import check_stream

example = load_example("lightning_train")
QUIET = {"step_interval_s": 0, "heartbeat_interval_s": None}


class Evaluated(example.TinyRegression):
    """The example's model with a test step and a predict step."""

    def test_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> None:
        self.log("test_loss", torch.nn.functional.mse_loss(self.layer(batch[0]), batch[1]))

    def predict_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        return self.layer(batch[0])


def events(path: Path) -> list[str]:
    return [line["event"] for line in stream_of(path)]


@pytest.mark.parametrize("entry", ["validate", "test", "predict"])
def test_validate_test_and_predict_with_a_fresh_callback_are_finished_runs(tmp_path: Path, entry: str) -> None:
    callback = TrainwireCallback(**QUIET)
    trainer = example.trainer_for(str(tmp_path), 4, callback)
    getattr(trainer, entry)(Evaluated(), example.loader(16))

    path = tmp_path / "progress.jsonl"
    assert check_stream(path.read_bytes()) == []
    stream = stream_of(path)
    phase = "predict" if entry == "predict" else "eval"
    progress = [(line["done"], line["total"]) for line in stream if line["event"] == "phase.progress"]
    assert [line["phase"] for line in stream if line["event"] == "phase.started"] == [phase]
    assert progress == [(1, 2), (2, 2)]
    evals = [(line["split"], sorted(line["metrics"])) for line in stream if line["event"] == "eval.completed"]
    assert evals == ({"validate": [("validation", ["loss"])], "test": [("test", ["loss"])]}.get(entry, []))
    assert (stream[-1]["event"], stream[-1]["status"]) == ("run.finished", "succeeded")
    assert callback.run is not None and callback.run.status == "succeeded"


def test_a_validate_after_a_fit_is_a_run_of_its_own_in_the_same_file(tmp_path: Path) -> None:
    callback = TrainwireCallback(**QUIET)
    trainer = example.trainer_for(str(tmp_path), 4, callback)
    trainer.fit(Evaluated(), example.loader())
    trainer.validate(Evaluated(), example.loader(16))

    path = tmp_path / "progress.jsonl"
    assert check_stream(path.read_bytes()) == []
    finished = [line for line in stream_of(path) if line["event"] == "run.finished"]
    assert len({line["run_id"] for line in finished}) == 2 and all(line["status"] == "succeeded" for line in finished)


def logged_fit(tmp_path: Path, logger: pl.loggers.Logger, model: pl.LightningModule, **options: Any) -> pl.Trainer:
    trainer = example.trainer_for(str(tmp_path), 4, None, logger=logger, callbacks=[], log_every_n_steps=1, **options)
    trainer.fit(model, example.loader())
    return trainer


@pytest.mark.parametrize("kind", ["csv", "trainwire"])
def test_checkpoints_go_to_the_next_version_folder_as_with_the_built_in_loggers(tmp_path: Path, kind: str) -> None:
    def made() -> pl.loggers.Logger:
        if kind == "csv":
            return pl.loggers.CSVLogger(tmp_path, name="trainwire")
        return TrainwireLogger(tmp_path, **QUIET)

    for _ in range(2):
        logged_fit(tmp_path, made(), Evaluated(), enable_checkpointing=True)
    found = sorted(path.relative_to(tmp_path).as_posix() for path in tmp_path.glob("trainwire/*/checkpoints/*.ckpt"))
    assert found == [
        "trainwire/version_0/checkpoints/epoch=0-step=4.ckpt",
        "trainwire/version_1/checkpoints/epoch=0-step=4.ckpt",
    ]


def test_a_given_version_names_the_folder() -> None:
    assert TrainwireLogger(version="exp-a").version == "exp-a"
    assert TrainwireLogger(version=3).version == 3


def test_the_logger_pickles_and_deep_copies_before_while_and_after_writing(tmp_path: Path) -> None:
    logger = TrainwireLogger(tmp_path, **QUIET)
    logger.log_hyperparams({"lr": 0.1})
    copies = [pickle.loads(pickle.dumps(logger)), copy.deepcopy(logger)]
    logger.log_metrics({"train_loss": 1.0}, step=0)  # writes: the run holds a lock and a file
    copies += [pickle.loads(pickle.dumps(logger)), copy.deepcopy(logger)]
    logger.finalize("success")
    copies += [pickle.loads(pickle.dumps(logger)), copy.deepcopy(logger)]

    assert all(each.hyperparameters == {"lr": 0.1} and each.version == logger.version for each in copies)
    stream = stream_of(tmp_path / "progress.jsonl")
    assert events(tmp_path / "progress.jsonl")[-1] == "run.finished" and len({line["run_id"] for line in stream}) == 1
    # a copy used after the original finished writes a run of its own, whole
    copies[-1].log_metrics({"train_loss": 0.5}, step=1)
    copies[-1].finalize("success")
    assert check_stream((tmp_path / "progress.jsonl").read_bytes()) == []
    assert len({line["run_id"] for line in stream_of(tmp_path / "progress.jsonl")}) == 2


def test_a_fit_that_logs_nothing_is_a_run_of_the_logger(tmp_path: Path) -> None:
    logged_fit(tmp_path, TrainwireLogger(tmp_path, **QUIET), Evaluated())
    path = tmp_path / "progress.jsonl"
    assert check_stream(path.read_bytes()) == []
    assert events(path) == ["run.started", "phase.started", "phase.ended", "run.finished"]
    assert stream_of(path)[0]["config"] == {"lr": 0.05, "step_delay_s": 0.0}


def test_the_logger_alone_writes_a_test_as_an_evaluation_of_its_own_run(tmp_path: Path) -> None:
    class Logging(Evaluated):
        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            loss = super().training_step(batch, batch_idx)
            self.log("train_loss", loss)
            return loss

    trainer = logged_fit(tmp_path, TrainwireLogger(tmp_path, **QUIET), Logging())
    trainer.test(Logging(), example.loader(16))

    path = tmp_path / "progress.jsonl"
    assert check_stream(path.read_bytes()) == []
    stream = stream_of(path)
    fit_run, test_run = dict.fromkeys(line["run_id"] for line in stream)
    steps = [line for line in stream if line["event"] == "train.step"]
    assert {line["run_id"] for line in steps} == {fit_run}
    assert all("test_loss" not in line.get("metrics", {}) for line in steps)
    tests = [line for line in stream if line["run_id"] == test_run]
    assert [line["event"] for line in tests] == ["run.started", "eval.completed", "run.finished"]
    assert (tests[1]["split"], sorted(tests[1]["metrics"]), tests[1]["step"]) == ("test", ["loss"], 4)


def test_a_second_trainwire_callback_warns_and_writes_nothing(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    first, second = TrainwireCallback(**QUIET), TrainwireCallback(**QUIET)
    with caplog.at_level(logging.WARNING, logger="trainwire.integrations.lightning"):
        example.trainer_for(str(tmp_path), 3, first, callbacks=[first, second]).fit(Evaluated(), example.loader())

    path = tmp_path / "progress.jsonl"
    assert check_stream(path.read_bytes()) == []
    assert len({line["run_id"] for line in stream_of(path)}) == 1
    assert first.run is not None and first.run.status == "succeeded" and second.run is None
    assert "second TrainwireCallback" in caplog.text


def test_a_name_given_to_the_logger_names_the_folder_and_the_run(tmp_path: Path) -> None:
    logged_fit(tmp_path, TrainwireLogger(tmp_path, name="exp-1", **QUIET), Evaluated(), enable_checkpointing=True)
    assert list(tmp_path.glob("exp-1/version_0/checkpoints/*.ckpt"))
    assert stream_of(tmp_path / "progress.jsonl")[0]["name"] == "exp-1"
