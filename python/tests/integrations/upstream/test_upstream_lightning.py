"""Lightning's generic logger and callback behaviours, held over a built-in and trainwire's.

Follows `tests/tests_pytorch/loggers/test_all.py` and `tests/tests_pytorch/callbacks/
test_callbacks.py` of Lightning 2.6.5 (the nearest tag to the tested 2.6.6), written anew in
their style: every test runs with `CSVLogger` (or a built-in callback) and with trainwire's,
and asserts the same thing of both; what only trainwire adds (a valid stream) comes after.
What trainwire does differently on purpose is in docs/integrations.md.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest
import torch
from lightning.pytorch import Callback, LightningModule, Trainer
from lightning.pytorch.callbacks import Timer
from lightning.pytorch.demos.boring_classes import BoringModel
from lightning.pytorch.loggers import CSVLogger, Logger
from lightning.pytorch.tuner.tuning import Tuner
from support.stream_files import stream_of

from trainwire.integrations.lightning import TrainwireCallback, TrainwireLogger
from trainwire.reader.invariants import check_stream

LOGGERS = ["csv", "trainwire"]
QUIET = {"step_interval_s": 0, "heartbeat_interval_s": None}


def made_logger(kind: str, save_dir: Path, cls: type[Logger] | None = None) -> Logger:
    if kind == "csv":
        return (cls or CSVLogger)(save_dir=str(save_dir))
    return (cls or TrainwireLogger)(save_dir, **QUIET)


def history_logger(kind: str) -> type[Logger]:
    """The logger class recording every `log_metrics` call, as upstream's StoreHistoryLogger."""
    base: type[Logger] = CSVLogger if kind == "csv" else TrainwireLogger

    class StoreHistoryLogger(base):  # type: ignore[valid-type,misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.history: list[tuple[int | None, dict[str, float]]] = []

        def log_metrics(self, metrics: dict[str, float], step: int | None = None) -> None:
            super().log_metrics(metrics, step)
            self.history.append((step, dict(metrics)))

    return StoreHistoryLogger


def valid_stream(directory: Path) -> list[dict[str, Any]]:
    path = directory / "progress.jsonl"
    assert check_stream(path.read_bytes()) == []
    return stream_of(path)


def tiny_trainer(tmp_path: Path, **options: Any) -> Trainer:
    settings: dict[str, Any] = dict(
        default_root_dir=tmp_path, accelerator="cpu", devices=1, enable_progress_bar=False,
        enable_model_summary=False,
    )  # fmt: skip
    return Trainer(**{**settings, **options})


@pytest.mark.parametrize("kind", LOGGERS)
def test_loggers_fit_test_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    monkeypatch.chdir(tmp_path)

    class CustomModel(BoringModel):
        def training_step(self, batch: Any, batch_idx: int) -> dict[str, torch.Tensor]:
            loss = self.step(batch)
            self.log("train_some_val", loss)
            return {"loss": loss}

        def on_validation_epoch_end(self) -> None:
            self.log_dict({"early_stop_on": torch.tensor(1), "val_loss": torch.tensor(0.5)})

        def on_test_epoch_end(self) -> None:
            self.log("test_loss", torch.tensor(2))

    logger = made_logger(kind, tmp_path, history_logger(kind))
    trainer = tiny_trainer(
        tmp_path, max_epochs=1, logger=logger, limit_train_batches=1, limit_val_batches=1, log_every_n_steps=1
    )
    trainer.fit(CustomModel())
    trainer.test()

    assert [(step, sorted(metrics)) for step, metrics in logger.history] == [
        (0, ["epoch", "train_some_val"]),
        (0, ["early_stop_on", "epoch", "val_loss"]),
        (1, ["epoch", "test_loss"]),
    ]
    if kind == "trainwire":  # the fit's run, then the test's own run
        stream = valid_stream(tmp_path)
        fit_run, test_run = dict.fromkeys(line["run_id"] for line in stream)
        evals = [(line["run_id"], line["split"], sorted(line["metrics"])) for line in stream if "split" in line]
        assert evals == [(fit_run, "validation", ["loss"]), (test_run, "test", ["loss"])]


@pytest.mark.parametrize("kind", LOGGERS)
def test_loggers_pickle_all(tmp_path: Path, kind: str) -> None:
    logger = made_logger(kind, tmp_path)
    # a logger must keep unpicklable things (an open file, a lock) out of its state
    logger.log_metrics({"a": 1}, step=0)
    logger.save()
    pickle.dumps(logger)

    trainer = Trainer(max_epochs=1, logger=logger, default_root_dir=tmp_path)
    again: Trainer = pickle.loads(pickle.dumps(trainer))
    assert again.logger is not None
    again.logger.log_metrics({"acc": 1.0}, step=1)

    assert again.logger.name == logger.name
    assert again.logger.save_dir == logger.save_dir
    assert again.logger.version == logger.version


@pytest.mark.parametrize("kind", LOGGERS)
def test_several_loggers_at_once_get_the_same_values(tmp_path: Path, kind: str) -> None:
    class Logging(BoringModel):
        def training_step(self, batch: Any, batch_idx: int) -> dict[str, torch.Tensor]:
            output = super().training_step(batch, batch_idx)
            self.log("train_some_val", output["loss"])
            return output

    first = made_logger("csv", tmp_path / "first", history_logger("csv"))
    second = made_logger(kind, tmp_path / "second", history_logger(kind))
    trainer = tiny_trainer(
        tmp_path, max_steps=3, logger=[first, second], limit_val_batches=0, log_every_n_steps=1,
    )  # fmt: skip
    trainer.fit(Logging())

    assert first.history == second.history and len(first.history) == 3
    # the first logger places the checkpoints
    assert list((tmp_path / "first" / "lightning_logs").glob("version_0/checkpoints/*.ckpt"))
    if kind == "trainwire":
        assert [line["step"] for line in valid_stream(tmp_path / "second") if line["event"] == "train.step"] == [
            1,
            2,
            3,
        ]


@pytest.mark.parametrize("tuner_method", ["lr_find", "scale_batch_size"])
@pytest.mark.parametrize("kind", LOGGERS)
def test_logger_reset_correctly(tmp_path: Path, kind: str, tuner_method: str) -> None:
    class CustomModel(BoringModel):
        def __init__(self, lr: float = 0.1, batch_size: int = 1) -> None:
            super().__init__()
            self.save_hyperparameters()

    model = CustomModel()
    trainer = tiny_trainer(tmp_path, max_epochs=1, logger=made_logger(kind, tmp_path))
    tuner = Tuner(trainer)

    before = trainer.logger
    if tuner_method == "lr_find":
        tuner.lr_find(model, num_training=8)
    else:
        tuner.scale_batch_size(model, max_trials=3, steps_per_trial=1)
    assert trainer.logger is before, "the tuner altered the trainer's logger"
    assert model.logger is before, "the tuner altered the model's logger"


def test_the_default_names_are_each_loggers_own(tmp_path: Path) -> None:
    # Lightning's loggers default to "lightning_logs"; trainwire's to "trainwire" (on purpose:
    # its checkpoints folder says whose it is). Both take `name=` alike.
    assert CSVLogger(save_dir=tmp_path).name == "lightning_logs"
    assert TrainwireLogger(tmp_path).name == "trainwire"
    assert CSVLogger(save_dir=tmp_path, name="exp").name == TrainwireLogger(tmp_path, name="exp").name == "exp"


@pytest.mark.parametrize("kind", LOGGERS)
def test_fast_dev_run_writes_through_no_logger(tmp_path: Path, kind: str) -> None:
    # Lightning swaps every logger for a DummyLogger in a fast_dev_run: nothing is written.
    trainer = tiny_trainer(tmp_path, logger=made_logger(kind, tmp_path), fast_dev_run=True)
    trainer.fit(BoringModel())
    assert trainer.global_step == 1
    written = [path for path in tmp_path.rglob("*") if path.is_file() and path.stat().st_size > 0]
    assert written == []


class StateCallback(Callback):
    """A stateful callback, saved in and restored from the checkpoint by its state key."""

    def __init__(self, state: int) -> None:
        self.state = state

    def state_dict(self) -> dict[str, int]:
        return {"state": self.state}

    def load_state_dict(self, state_dict: dict[str, int]) -> None:
        self.state = state_dict["state"]


def made_callback(kind: str, tmp_path: Path) -> Callback:
    return Timer() if kind == "builtin" else TrainwireCallback(output_dir=tmp_path, **QUIET)


@pytest.mark.parametrize("kind", ["builtin", "trainwire"])
def test_callbacks_configured_in_model(tmp_path: Path, kind: str) -> None:
    callback = made_callback(kind, tmp_path)

    class Configured(BoringModel):
        def configure_callbacks(self) -> list[Callback]:
            return [callback]

    trainer = tiny_trainer(tmp_path, max_steps=2, limit_val_batches=0, logger=False)
    trainer.fit(Configured())
    assert callback in trainer.callbacks
    trainer.test(Configured())
    assert callback in trainer.callbacks
    if kind == "trainwire":  # the fit's run and the test's, each finished
        stream = valid_stream(tmp_path)
        assert [line["status"] for line in stream if line["event"] == "run.finished"] == ["succeeded", "succeeded"]


@pytest.mark.parametrize("kind", ["builtin", "trainwire"])
def test_resume_restores_callback_state_and_goes_on(tmp_path: Path, kind: str) -> None:
    model: LightningModule = BoringModel()
    trainer = tiny_trainer(tmp_path, max_steps=1, callbacks=[StateCallback(111), made_callback(kind, tmp_path)])
    trainer.fit(model)
    checkpoint = Path(trainer.checkpoint_callback.best_model_path)  # type: ignore[union-attr]
    assert checkpoint.exists()

    restored = StateCallback(222)
    trainer = tiny_trainer(tmp_path, max_steps=2, callbacks=[restored, made_callback(kind, tmp_path)])
    trainer.fit(model, ckpt_path=checkpoint, weights_only=False)
    assert restored.state == 111 and trainer.global_step == 2
    if kind == "trainwire":  # the second run says where it came from
        stream = valid_stream(tmp_path)
        first, second = (line for line in stream if line["event"] == "run.started")
        assert second["resumed_from"]["run_id"] == first["run_id"] and second["resumed_from"]["step"] == 1


def test_logger_initialization_under_ddp_spawn(tmp_path: Path) -> None:
    # The logger is pickled into two spawned processes and rank zero's copy writes one run.
    # trainwire's only: upstream runs the built-ins, and two spawns cost a minute here.
    trainer = tiny_trainer(
        tmp_path, logger=made_logger("trainwire", tmp_path), strategy="ddp_spawn", devices=2, max_steps=1
    )
    trainer.fit(BoringModel())
    stream = valid_stream(tmp_path)
    assert len({line["run_id"] for line in stream}) == 1 and stream[0]["world_size"] == 2
    assert (stream[-1]["event"], stream[-1]["status"]) == ("run.finished", "succeeded")
