"""Ray Tune experiments written by `trainwire.integrations.ray_tune` on a real local Ray
(one session for the module): a function trainable with a tiny torch model, a trial that
raises, checkpoints under the output directory, a stop file mid-experiment and SIGTERM or SIGINT
sent to a driver process (which joins the module's Ray); and a transformers
`Trainer.hyperparameter_search(backend="ray")` with `attach()`, each in a fresh driver process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import ray
import torch
from ray import tune
from support.paths import ROOT, SCRIPTS
from support.stopped_processes import signalled_after_step
from support.stream_files import stream_of

from trainwire.integrations.ray_tune import TuneSearch
from trainwire.stop import request_stop

STREAM = "progress.jsonl"


@pytest.fixture(scope="module", autouse=True)
def ray_session() -> Iterator[None]:
    # Ray's workers import the trainable from this file (and its test support) and trainwire
    # from these sources.
    here = Path(__file__).resolve().parent
    tests = ROOT / "python" / "tests"
    path = os.pathsep.join([str(here), str(tests), str(ROOT / "python" / "src"), os.environ.get("PYTHONPATH", "")])
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
        runtime_env={"env_vars": {"PYTHONPATH": path}},
    )
    yield
    ray.shutdown()


def trainable(config: dict[str, Any]) -> None:
    """A tiny linear model fitted a few steps; lr 0 raises (the failed trial)."""
    if config["lr"] == 0:
        raise ValueError("lr must be positive")
    torch.manual_seed(0)
    model = torch.nn.Linear(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=config["lr"])
    inputs, targets = torch.randn(16, 2), torch.randn(16, 1)
    for step in range(config.get("steps", 3)):
        loss = torch.nn.functional.mse_loss(model(inputs), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step == 1 and config.get("stop_dir"):
            request_stop(config["stop_dir"])
        with tempfile.TemporaryDirectory() as directory:
            torch.save(model.state_dict(), Path(directory) / "model.pt")
            tune.report({"loss": loss.item()}, checkpoint=tune.Checkpoint.from_directory(directory))


def fit(search: TuneSearch, space: dict[str, Any]) -> None:
    tuner = tune.Tuner(
        trainable,
        param_space=space,
        tune_config=tune.TuneConfig(max_concurrent_trials=2),
        run_config=tune.RunConfig(
            name="sweep", storage_path=search.storage_path, callbacks=[search], stop=search.stopper, verbose=0
        ),
    )
    tuner.fit()


def test_an_experiment_writes_each_trial_its_steps_checkpoints_errors_and_the_best(tmp_path: Path) -> None:
    with TuneSearch(tmp_path, metric="loss", mode="min", total_trials=3, step_interval_s=0) as search:
        fit(search, {"lr": tune.grid_search([0.1, 0.0, 0.01])})
    events = stream_of(tmp_path / STREAM)
    started = {event["trial"]: event["params"]["lr"] for event in events if event["event"] == "trial.started"}
    assert sorted(started.values()) == [0.0, 0.01, 0.1]
    ended = {event["trial"]: event for event in events if event["event"] == "trial.ended"}
    failed = next(number for number, lr in started.items() if lr == 0.0)
    assert ended[failed]["status"] == "failed" and "lr must be positive" in ended[failed]["error"]["message"]
    for number in set(started) - {failed}:
        steps = [e["step"] for e in events if e["event"] == "train.step" and e["trial"] == number]
        assert steps == [1, 2, 3] and ended[number]["status"] == "succeeded"
        checkpoints = [e["path"] for e in events if e["event"] == "checkpoint.saved" and e["trial"] == number]
        assert len(checkpoints) == 3 and all(path.startswith("sweep/") for path in checkpoints)
    losses = {number: ended[number]["metrics"]["loss"] for number in set(started) - {failed}}
    best = min(losses, key=losses.__getitem__)
    assert events[-2]["best"] == {"trial": best, "metric": "loss", "value": losses[best]}
    assert events[-1]["event"] == "run.finished" and events[-1]["status"] == "succeeded"


def test_a_stop_file_ends_the_experiment_through_tune_interrupted(tmp_path: Path) -> None:
    with TuneSearch(tmp_path, check_interval_s=0) as search:
        fit(search, {"lr": 0.1, "steps": 50, "stop_dir": str(tmp_path)})
    events = stream_of(tmp_path / STREAM)
    steps = [event["step"] for event in events if event["event"] == "train.step"]
    assert steps and max(steps) < 50
    assert events[-1]["status"] == "interrupted" and events[-1]["reason"] == "control_file"
    assert search.run.exit_code == 2


@pytest.mark.parametrize("sent", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_to_the_driver_ends_the_experiment_through_tune_interrupted(
    tmp_path: Path, sent: signal.Signals
) -> None:
    address = ray.get_runtime_context().gcs_address
    command = [sys.executable, str(SCRIPTS / "tune_driver.py"), address, str(tmp_path)]
    code, stderr = signalled_after_step(command, tmp_path / STREAM, 2, sent)
    assert code == 2, stderr[-4000:]
    events = stream_of(tmp_path / STREAM)
    finished = [event for event in events if event["event"] == "run.finished"]
    assert finished == [events[-1]] and finished[0]["status"] == "interrupted"
    assert finished[0]["reason"] == sent.name.lower()
    stops = [event for event in events if event["event"] == "stop.requested"]
    assert [(stop["source"], stop["signal"]) for stop in stops] == [("signal", sent.name)]
    steps = [event["step"] for event in events if event["event"] == "train.step"]
    assert max(steps) < 500
    ended = [(event["trial"], event["status"], event["error"]) for event in events if event["event"] == "trial.ended"]
    assert [(trial, status, error["message"]) for trial, status, error in ended] == [
        (1, "failed", "the experiment stopped before the trial ended")
    ]


def trainer_search(tmp_path: Path, mode: str) -> dict[str, Any]:
    """`support/scripts/ray_trainer_search.py` in a fresh driver joining the module's Ray: what it printed."""
    address = ray.get_runtime_context().gcs_address
    command = [sys.executable, str(SCRIPTS / "ray_trainer_search.py"), address, str(tmp_path), mode]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def test_a_trainer_search_on_ray_is_the_attached_run_with_tunes_trials(tmp_path: Path) -> None:
    found = trainer_search(tmp_path, "search")
    best = found["best"]
    events = stream_of(tmp_path / STREAM)
    assert len({event["run_id"] for event in events}) == 1
    assert events[0]["event"] == "run.started" and events[0]["total_trials"] == 1
    params = {event["trial"]: event["params"] for event in events if event["event"] == "trial.started"}
    assert sorted(lr["learning_rate"] for lr in params.values()) == [1e-3, 1e-2]
    steps = [(event["trial"], event["step"]) for event in events if event["event"] == "train.step"]
    assert sorted(steps) == [(1, 1), (2, 1)]  # the Trainer reports once, at its evaluation
    ended = {event["trial"]: event for event in events if event["event"] == "trial.ended"}
    assert {number: event["status"] for number, event in ended.items()} == {1: "succeeded", 2: "succeeded"}
    winner = next(number for number, value in params.items() if value == best["hyperparameters"])
    assert events[-2]["best"] == {"trial": winner, "metric": "objective", "value": best["objective"]}
    assert events[-1]["event"] == "run.finished" and events[-1]["status"] == "succeeded"
    # The callback and the wrappers are back on the Trainer once Tune has copied it.
    assert found["callbacks_back"] and found["wrapped"] and found["status"] == "succeeded"


def test_a_stop_ends_a_trainer_search_on_ray_interrupted(tmp_path: Path) -> None:
    found = trainer_search(tmp_path, "stop")
    events = stream_of(tmp_path / STREAM)
    ended = [(event["trial"], event["status"]) for event in events if event["event"] == "trial.ended"]
    assert ended == [(1, "failed")]
    assert events[-1]["status"] == "interrupted" and events[-1]["reason"] == "control_file"
    assert found["exit_code"] == 2


def scoring(config: dict[str, Any]) -> None:
    """Reports a score that falls with each step: the best of a `min` search is the last."""
    for step in range(1, 4):
        tune.report({"score": config["scale"] / step})


def test_an_owned_run_is_named_and_its_best_follows_the_mode(tmp_path: Path) -> None:
    with TuneSearch(tmp_path, metric="score", mode="min", name="tune sweep", step_interval_s=0) as search:
        tuner = tune.Tuner(
            scoring,
            param_space={"scale": tune.grid_search([1.0, 3.0])},
            run_config=tune.RunConfig(name=search.run.name, storage_path=search.storage_path, callbacks=[search]),
        )
        tuner.fit()
    started = stream_of(tmp_path / STREAM)[0]
    assert (started["name"], started["objective"]) == ("tune sweep", {"name": "score", "goal": "min"})
    summary = json.loads((tmp_path / "runs" / search.run.run_id / "summary.json").read_text())
    assert summary["best"]["score"]["value"] == pytest.approx(1.0 / 3)
