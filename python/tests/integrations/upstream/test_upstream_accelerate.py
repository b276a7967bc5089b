"""Accelerate's generic tracker behaviours, held over the built-in `TensorBoardTracker` and
trainwire's `TrainwireTracker`.

Follows `tests/test_tracking.py` of Accelerate's 1.15.0 development line (commit 16cb6eb8,
the nearest to the tested 1.15.0), written anew in its style: every tracker goes through
`Accelerator(log_with=...)`, `init_trackers`, `log` and `end_training`, and each test asserts
the same of both; what only trainwire adds (the stream's lines) comes after. What trainwire
does differently on purpose is in docs/integrations.md.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from accelerate import Accelerator
from accelerate.state import PartialState
from accelerate.tracking import LOGGER_TYPE_TO_CLASS, GeneralTracker, TensorBoardTracker, register_tracker_class
from support.stream_files import stream_of
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from trainwire.integrations.accelerate import TrainwireTracker
from trainwire.reader.invariants import check_stream

TRACKERS = ["tensorboard", "trainwire"]


@pytest.fixture(autouse=True)
def fresh_state() -> Iterator[None]:
    """Each test starts without Accelerate's process state, as a new script would."""
    PartialState._reset_state()
    yield
    PartialState._reset_state()


def accelerator_with(kind: str, directory: Path) -> Accelerator:
    if kind == "tensorboard":
        return Accelerator(cpu=True, log_with="tensorboard", project_dir=directory)
    return Accelerator(cpu=True, log_with=[TrainwireTracker(directory, step_interval_s=0)])


def scalars(kind: str, directory: Path, project: str) -> dict[str, list[float]]:
    """What the tracker wrote, read back by its own reader: every scalar by name."""
    if kind == "tensorboard":
        events = EventAccumulator(str(directory / project))
        events.Reload()
        return {tag: [event.value for event in events.Scalars(tag)] for tag in events.Tags()["scalars"]}
    path = directory / "progress.jsonl"
    assert check_stream(path.read_bytes()) == []
    found: dict[str, list[float]] = {}
    for line in stream_of(path):
        for name, value in {**line.get("metrics", {}), **({"loss": line["loss"]} if "loss" in line else {})}.items():
            found.setdefault(name, []).append(value)
    return found


@pytest.mark.parametrize("kind", TRACKERS)
def test_init_trackers(tmp_path: Path, kind: str) -> None:
    accelerator = accelerator_with(kind, tmp_path)
    config = {"num_iterations": 12, "learning_rate": 1e-2, "some_boolean": False, "some_string": "some_value"}
    accelerator.init_trackers("test_project_with_config", config)
    accelerator.end_training()
    written = [path for path in tmp_path.rglob("*") if path.is_file() and path.stat().st_size > 0]
    assert written, "the tracker wrote nothing"
    if kind == "trainwire":
        started = stream_of(tmp_path / "progress.jsonl")[0]
        assert (started["name"], started["config"]) == ("test_project_with_config", config)


@pytest.mark.parametrize("kind", TRACKERS)
def test_log(tmp_path: Path, kind: str) -> None:
    accelerator = accelerator_with(kind, tmp_path)
    accelerator.init_trackers("test_project_with_log")
    accelerator.log({"total_loss": 0.1, "iteration": 1, "my_text": "some_value"}, step=0)
    accelerator.end_training()
    found = scalars(kind, tmp_path, "test_project_with_log")
    assert found["total_loss"] == [pytest.approx(0.1)] and found["iteration"] == [1]


@pytest.mark.parametrize("kind", TRACKERS)
def test_log_with_tensor(tmp_path: Path, kind: str) -> None:
    accelerator = accelerator_with(kind, tmp_path)
    accelerator.init_trackers("test_project_with_log")
    accelerator.log({"tensor": torch.tensor(1)}, step=0)
    accelerator.end_training()
    assert scalars(kind, tmp_path, "test_project_with_log")["tensor"] == [1.0]


@pytest.mark.parametrize("kind", TRACKERS)
def test_none_kwargs(tmp_path: Path, kind: str) -> None:
    accelerator = accelerator_with(kind, tmp_path)
    accelerator.init_trackers("Some name", init_kwargs=None)  # must not raise
    accelerator.log({"total_loss": 0.1}, step=0, log_kwargs=None)
    accelerator.end_training()
    assert scalars(kind, tmp_path, "Some name")["total_loss"] == [pytest.approx(0.1)]


def test_project_dir() -> None:
    # The built-in needs a logging directory; trainwire's does not (it writes in its own
    # output directory, the current one by default).
    with pytest.raises(ValueError, match="requires a `logging_dir`"):
        Accelerator(cpu=True, log_with="tensorboard")
    assert TrainwireTracker.requires_logging_directory is False


@pytest.fixture
def registry() -> Iterator[None]:
    snapshot = dict(LOGGER_TYPE_TO_CLASS)
    yield
    LOGGER_TYPE_TO_CLASS.clear()
    LOGGER_TYPE_TO_CLASS.update(snapshot)


@pytest.mark.parametrize("kind", TRACKERS)
def test_register_and_use_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, registry: None, kind: str) -> None:
    monkeypatch.chdir(tmp_path)
    tracker_class: type[GeneralTracker] = TensorBoardTracker if kind == "tensorboard" else TrainwireTracker
    register_tracker_class(tracker_class)
    accelerator = Accelerator(cpu=True, log_with=tracker_class.name, project_dir=tmp_path / "logs")
    config = {"num_iterations": 12, "learning_rate": 1e-2}
    accelerator.init_trackers("some_project", config)
    accelerator.log({"total_loss": 0.1}, step=0)
    tracker = accelerator.get_tracker(tracker_class.name)
    accelerator.end_training()

    assert isinstance(tracker, tracker_class)
    # each writes under the Accelerator's logging_dir (TensorBoard in a folder per project)
    assert scalars(kind, tmp_path / "logs", "some_project")["total_loss"] == [pytest.approx(0.1)]
    assert not (tmp_path / "some_project").exists()


def made_tracker(kind: str, directory: Path) -> Any:
    if kind == "tensorboard":
        return TensorBoardTracker(run_name="deferred", logging_dir=directory)
    return TrainwireTracker(directory)


@pytest.mark.parametrize("kind", TRACKERS)
def test_deferred_init(tmp_path: Path, kind: str) -> None:
    # Making a tracker must not set up the process state before the Accelerator does.
    tracker = made_tracker(kind, tmp_path)
    assert PartialState._shared_state == {}
    Accelerator(cpu=True, log_with=tracker)
    assert PartialState._shared_state != {}
