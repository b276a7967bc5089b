"""Ray Tune's callback conventions, held over the built-in logger callbacks (the CSV and
JSON results Tune writes for every trial) and trainwire's `TuneSearch`, in one experiment.

Follows the callback tests of Ray 2.60 (`python/ray/tune/tests/test_callbacks.py` and the
logger callbacks' tests: the driver's callback gets `on_trial_start`, each
`on_trial_result`, then `on_trial_complete` or `on_trial_error`, and `on_experiment_end`),
written anew in their style: a recording callback, Tune's own loggers and trainwire's search
see the same trials and results. One experiment only: a Ray session costs seconds here.
What trainwire does differently on purpose is in docs/integrations.md.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import ray
from ray import tune
from support.paths import ROOT
from support.stream_files import stream_of

from trainwire.integrations.ray_tune import TuneSearch
from trainwire.reader.invariants import check_stream


@pytest.fixture(scope="module", autouse=True)
def ray_session() -> Iterator[None]:
    here = Path(__file__).resolve().parent
    path = os.pathsep.join([str(here), str(ROOT / "python" / "tests"), str(ROOT / "python" / "src")])
    ray.init(
        num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False,
        runtime_env={"env_vars": {"PYTHONPATH": path}},
    )  # fmt: skip
    yield
    ray.shutdown()


def trainable(config: dict[str, Any]) -> None:
    if config["lr"] == 0:
        raise ValueError("lr must be positive")
    loss = 1.0
    for _ in range(3):
        loss *= 1 - config["lr"]
        tune.report({"loss": loss})


class Recorder(tune.Callback):
    """Every hook the driver calls, with the trial's parameter."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def on_trial_start(self, iteration: int, trials: list[Any], trial: Any, **info: Any) -> None:
        self.calls.append(("start", trial.config["lr"]))

    def on_trial_result(self, iteration: int, trials: list[Any], trial: Any, result: dict, **info: Any) -> None:
        self.calls.append(("result", trial.config["lr"]))

    def on_trial_complete(self, iteration: int, trials: list[Any], trial: Any, **info: Any) -> None:
        self.calls.append(("complete", trial.config["lr"]))

    def on_trial_error(self, iteration: int, trials: list[Any], trial: Any, **info: Any) -> None:
        self.calls.append(("error", trial.config["lr"]))

    def on_experiment_end(self, trials: list[Any], **info: Any) -> None:
        self.calls.append(("end", None))


def test_the_built_in_loggers_a_callback_and_trainwire_see_the_same_trials(tmp_path: Path) -> None:
    recorder = Recorder()
    with TuneSearch(tmp_path, metric="loss", mode="min", total_trials=2, step_interval_s=0) as search:
        tuner = tune.Tuner(
            trainable,
            param_space={"lr": tune.grid_search([0.5, 0.0])},
            run_config=tune.RunConfig(
                name="sweep", storage_path=search.storage_path, callbacks=[recorder, search], stop=search.stopper,
                verbose=0,
            ),
        )  # fmt: skip
        results = tuner.fit()

    # the recording callback: every hook, in Tune's order
    assert recorder.calls.count(("result", 0.5)) == 3 and recorder.calls[-1] == ("end", None)
    assert ("complete", 0.5) in recorder.calls and ("error", 0.0) in recorder.calls
    # the built-in CSV logger: one row per result of the good trial
    (good,) = [result for result in results if result.error is None]
    with open(Path(good.path) / "progress.csv", newline="") as file:
        csv_losses = [float(row["loss"]) for row in csv.DictReader(file)]
    # trainwire: the same trials, the same results, the error, and the run's end
    path = tmp_path / "progress.jsonl"
    assert check_stream(path.read_bytes()) == []
    stream = stream_of(path)
    started = {line["trial"]: line["params"]["lr"] for line in stream if line["event"] == "trial.started"}
    by_lr = {lr: number for number, lr in started.items()}
    steps = [line["loss"] if "loss" in line else line["metrics"]["loss"] for line in stream
             if line["event"] == "train.step" and line["trial"] == by_lr[0.5]]  # fmt: skip
    assert steps == pytest.approx(csv_losses) and len(steps) == 3
    ended = {line["trial"]: line["status"] for line in stream if line["event"] == "trial.ended"}
    assert ended == {by_lr[0.5]: "succeeded", by_lr[0.0]: "failed"}
    assert (stream[-1]["event"], stream[-1]["status"]) == ("run.finished", "succeeded")
