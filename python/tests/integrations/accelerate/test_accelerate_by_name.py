"""The tracker registered by name (`log_with="trainwire"`): Accelerate makes it with the
project name, which names the run; the output goes to the Accelerator's `logging_dir`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from accelerate import Accelerator
from accelerate.tracking import LOGGER_TYPE_TO_CLASS, register_tracker_class
from accelerate.utils import ProjectConfiguration
from support.stream_files import stream_of

from trainwire.integrations.accelerate import TrainwireTracker
from trainwire.reader.invariants import check_stream


@pytest.fixture
def registered() -> Iterator[None]:
    register_tracker_class(TrainwireTracker)
    yield
    LOGGER_TYPE_TO_CLASS.pop(TrainwireTracker.name, None)


@pytest.mark.parametrize("project_dir", [None, "project"])
def test_a_tracker_registered_by_name_writes_in_the_logging_dir_named_after_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, registered: None, project_dir: str | None
) -> None:
    monkeypatch.chdir(tmp_path)
    configuration = ProjectConfiguration(project_dir=project_dir) if project_dir else None
    accelerator = Accelerator(cpu=True, log_with="trainwire", project_config=configuration)
    accelerator.init_trackers("exp-1", config={"lr": 0.1}, init_kwargs={"trainwire": {"tags": ["by-name"]}})
    accelerator.log({"loss": 0.5}, step=1)
    accelerator.end_training()

    path = tmp_path / (project_dir or ".") / "progress.jsonl"
    assert check_stream(path.read_bytes()) == []
    stream = stream_of(path)
    assert (stream[0]["name"], stream[0]["tags"], stream[0]["config"]) == ("exp-1", ["by-name"], {"lr": 0.1})
    assert (stream[-1]["event"], stream[-1]["status"]) == ("run.finished", "succeeded")
    assert not (tmp_path / "exp-1").exists()  # the project name is not the output directory
