"""`TrainDriver.fit(trainer)`: Ctrl+C on a Ray Train driver becomes the run's control file
while `fit()` runs in a thread of its own (where Ray Train takes no SIGINT). A stand-in
trainer, so no Ray: the snippet's own run is in test_ray_snippets."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest

from trainwire.integrations.ray_train import TrainDriver

TIMEOUT_S = 30


class Trainer:
    """Sends Ctrl+C to its own process from `fit()`, then waits for the control file, as
    rank 0 would, and returns what it saw."""

    def __init__(self, output_dir: Path, error: Exception | None = None) -> None:
        self.control_file = output_dir / ".trainwire-stop"
        self.error = error

    def fit(self) -> dict[str, str]:
        signal.raise_signal(signal.SIGINT)  # from this thread: the handler runs on the main one
        deadline = time.monotonic() + TIMEOUT_S
        while not self.control_file.exists():
            assert time.monotonic() < deadline, "no control file"
            time.sleep(0.01)
        if self.error is not None:
            raise self.error
        return json.loads(self.control_file.read_text(encoding="utf-8"))


def test_ctrl_c_during_fit_becomes_the_control_file_and_fit_returns_its_result(tmp_path: Path) -> None:
    before = signal.getsignal(signal.SIGINT)
    with TrainDriver(tmp_path) as driver:
        seen = driver.fit(Trainer(tmp_path))
    assert seen == {"reason": "SIGINT on the Ray Train driver", "requested_by": "the Ray Train driver"}
    assert driver.signalled == "SIGINT"
    assert signal.getsignal(signal.SIGINT) is before  # restored when the block ends


def test_an_error_of_fit_is_raised_by_the_driver(tmp_path: Path) -> None:
    with TrainDriver(tmp_path) as driver, pytest.raises(ValueError, match="worker failed"):
        driver.fit(Trainer(tmp_path, ValueError("worker failed")))
