"""The endings matrix: every way a run ends x every surface that tells it, each cell the same
verdict (status, duration, best value, params, checkpoint, completeness).

Each ending is one real process (`support.endings`), produced once per session and shared by
its cells. The reference is the verdict `trainwire runs --json` gives; every other surface
must tell that same story, and where the outcome is this branch's to decide (`KNOWN`), the
reference must be it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from mlflow.tracking import MlflowClient
from support.endings import ENDINGS, Ending
from support.paths import ROOT
from support.wandb_records import of_type, records, summary
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from trainwire._generated.contract import NOT_FINISHED_EXIT_CODE
from trainwire.cli import main
from trainwire.contract.clock import format_ts, now_us, parse_timestamp_us
from trainwire.contract.humanize import format_duration
from trainwire.export.scalars import safe_name
from trainwire.lines.verdict import status_text, verdict_text

#: (The runs stream every step, `step_interval_s=0`: no cell depends on when kept steps reach
#: the step file, which docs/journal.md bounds and its own tests hold.)
BEST = {"value": 0.25, "trial": 3}  # trial 2's 1e-05 is a failed trial's: no best of the search
PARAMS = {"layers": 3, "lr": 0.001, "opt": "adam"}  # `layers` an integer on every surface
LAST_SAVED = {"path": "ckpt/step-105", "source": "checkpoint.saved"}
#: the story of each ending this branch decides (the rest of it is BEST, PARAMS)
KNOWN: dict[str, dict[str, Any]] = {
    "succeeded": {"status": "succeeded", "checkpoint": {"path": "ckpt/final", "source": "run.finished"}},
    "failed": {"status": "failed", "checkpoint": LAST_SAVED},
    "control_file": {"status": "interrupted", "checkpoint": LAST_SAVED},
    "sigint": {"status": "interrupted", "checkpoint": LAST_SAVED},
    "sigterm": {"status": "interrupted", "checkpoint": LAST_SAVED},
    # a lost stream is not fatal: the training's own ending, the loss said beside it
    "full_disk": {"status": "succeeded", "checkpoint": {"path": "ckpt/final", "source": "run.finished"}},
    "sigkill": {"status": "stale", "liveness": "gone", "checkpoint": LAST_SAVED},
    "silent": {"status": "stale", "liveness": "alive", "checkpoint": LAST_SAVED},
}
#: MLflow's status of each verdict status: a run that died is never RUNNING
MLFLOW_STATUS = {"succeeded": "FINISHED", "failed": "FAILED", "interrupted": "KILLED", "stale": "KILLED"}


@pytest.fixture(scope="session")
def mlflow_store(tmp_path_factory: pytest.TempPathFactory) -> str:
    return f"sqlite:///{tmp_path_factory.mktemp('mlflow') / 'mlflow.db'}"


def trainwire(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trainwire", *arguments], capture_output=True, text=True, timeout=30, cwd=ROOT
    )


def story(verdict: Mapping[str, Any]) -> dict[str, Any]:
    """What every surface must agree on."""
    best = verdict["best"].get("loss")
    return {
        "status": verdict["status"],
        "duration_s": None if verdict["duration_s"] is None else round(verdict["duration_s"], 6),
        "best": None if best is None else {"value": best["value"], "trial": best["trial"]},
        "params": verdict["params"],
        "checkpoint": verdict["checkpoint"],
        "completeness": verdict["completeness"],
        "step": verdict["step"],
    }


def reference(listed: tuple[list[dict[str, Any]], str], ending: Ending) -> dict[str, Any]:
    (row,) = [row for row in listed[0] if row["run_id"] == ending.run_id]
    return row["verdict"]


def exit_code_of(verdict: Mapping[str, Any]) -> int:
    """The exit code every surface ends with: the run's, else not finished (a dead run's too)."""
    return NOT_FINISHED_EXIT_CODE if verdict["exit_code"] is None else verdict["exit_code"]


@pytest.mark.parametrize("name", list(ENDINGS))
def test_the_reference_is_the_right_story(endings: dict[str, Ending], listed: Any, name: str) -> None:
    verdict = reference(listed, endings[name])
    assert verdict["status"] != "running"  # every ending is over: none is running for ever
    known = KNOWN[name]
    assert {key: verdict[key] for key in known} == known
    if name == "full_disk":  # the best and the params are of what reached the stream: trial 3 never did
        assert verdict["completeness"]["stream_lines_lost"] > 0
        return
    assert story(verdict)["best"] == BEST
    accuracy = verdict["best"]["validation/accuracy"]  # a higher-is-better best, failed trial 2's 0.9 left out
    assert (accuracy["value"], accuracy["trial"], accuracy["goal"]) == (0.8, 3, "max")
    assert verdict["params"] == PARAMS and type(verdict["params"]["layers"]) is int


@pytest.mark.parametrize("name", list(ENDINGS))
def test_state(endings: dict[str, Ending], listed: Any, name: str) -> None:
    ending, verdict = endings[name], reference(listed, endings[name])
    judged = json.loads(trainwire("state", "--verdict", "--now", format_ts(now_us() / 1e6), str(ending.out)).stdout)
    assert story(judged[-1]) == story(verdict)
    # without a clock: the same story, or `running` as of the last line, said so (judged_at null)
    (unclocked,) = json.loads(trainwire("state", "--verdict", str(ending.out)).stdout)
    assert unclocked["judged_at"] is None
    if unclocked["status"] == "running":
        assert verdict["status"] == "stale" and verdict["liveness"] != "gone"
    else:
        assert story(unclocked) == story(verdict)


@pytest.mark.parametrize("follow", [False, True], ids=["once", "follow"])
@pytest.mark.parametrize("name", list(ENDINGS))
def test_tail(endings: dict[str, Ending], listed: Any, name: str, follow: bool) -> None:
    ending, verdict = endings[name], reference(listed, endings[name])
    result = trainwire("tail", *(["--follow", "--poll", "0.05"] if follow else []), str(ending.out))
    assert result.stdout.splitlines()[-1].startswith(f"[{ending.run_id}] {verdict_text(verdict)}"), result.stdout
    assert result.returncode == exit_code_of(verdict)


@pytest.mark.parametrize("name", list(ENDINGS))
def test_runs_text_and_json(endings: dict[str, Ending], listed: Any, name: str) -> None:
    ending, verdict = endings[name], reference(listed, endings[name])
    (row,) = [row for row in listed[0] if row["run_id"] == ending.run_id]
    assert (row["status"], row["step"], row["duration_s"]) == (
        verdict["status"],
        verdict["step"],
        verdict["duration_s"],
    )
    assert row["best_loss"] == (verdict["best"].get("loss") or {}).get("value")
    (line,) = [line for line in listed[1].splitlines() if line.startswith(ending.run_id)]
    cells = re.split(r"\s{2,}", line)
    assert cells[2] == status_text(verdict)
    assert cells[4] == ("-" if verdict["duration_s"] is None else format_duration(verdict["duration_s"]))
    if verdict["params"] is not None:
        assert "layers=3, lr=0.001, opt=adam" in line  # one order for every trial, integers as integers


@pytest.mark.parametrize("name", list(ENDINGS))
def test_diff(endings: dict[str, Ending], listed: Any, name: str) -> None:
    ending, verdict = endings[name], reference(listed, endings[name])
    result = trainwire("diff", "--json", str(ending.out), str(endings["succeeded"].out))
    metrics = {name: values[0] for name, values in _diff_metrics(json.loads(result.stdout)).items()}
    assert metrics["status"] == status_text(verdict)
    assert metrics["step"] == verdict["step"]
    assert round(metrics["duration_s"], 6) == story(verdict)["duration_s"]
    assert metrics.get("best loss") == (verdict["best"].get("loss") or {}).get("value")
    assert metrics.get("checkpoint") == (verdict["checkpoint"] or {}).get("path")
    for param, value in (verdict["params"] or {}).items():
        assert metrics[f"best trial {param}"] == value and type(metrics[f"best trial {param}"]) is type(value)


def _diff_metrics(compared: Mapping[str, Any]) -> dict[str, list[Any]]:
    """`{name: [run a's, run b's]}` from `diff --json`'s metrics, whichever layout it has."""
    metrics = compared["metrics"]
    if isinstance(metrics, Mapping):
        return {name: list(values) if isinstance(values, list) else [values] for name, values in metrics.items()}
    return {entry["name"]: [entry["a"], entry["b"]] for entry in metrics}


@pytest.mark.parametrize("name", list(ENDINGS))
def test_plot(endings: dict[str, Ending], listed: Any, name: str, tmp_path: Path) -> None:
    ending, verdict = endings[name], reference(listed, endings[name])
    page = tmp_path / "plot.html"
    assert trainwire("plot", str(ending.out), "--out", str(page)).returncode == 0
    text = page.read_text("utf-8")
    assert f'"status": "{status_text(verdict)}"' in text
    if verdict["params"] is not None:  # every eval marker names its trial
        assert all(f'"label": "validation, trial {trial}"' in text for trial in (1, 2, 3))
        assert '"label": "validation"' not in text


@pytest.mark.parametrize("name", list(ENDINGS))
def test_mlflow(endings: dict[str, Ending], listed: Any, name: str, mlflow_store: str) -> None:
    ending, verdict = endings[name], reference(listed, endings[name])
    code = main(["export", "mlflow", str(ending.out), "--tracking-uri", mlflow_store, "--experiment", name])
    assert code == (0 if verdict["exit_code"] is not None else NOT_FINISHED_EXIT_CODE)
    client = MlflowClient(mlflow_store)
    experiment = client.get_experiment_by_name(name).experiment_id
    (run,) = client.search_runs([experiment], f"tags.`trainwire.run_id` = '{ending.run_id}'")
    assert run.info.status == MLFLOW_STATUS[verdict["status"]]
    assert run.data.tags["trainwire.status"] == verdict["status"]
    if verdict["ended_at"] is not None:
        assert run.info.end_time == parse_timestamp_us(verdict["ended_at"]) // 1000
    trials = client.search_runs([experiment], "tags.`trainwire.trial` = '3'")
    if verdict["params"] is not None:
        (trial,) = trials
        assert trial.data.params["layers"] == str(verdict["params"]["layers"])  # `3`, never `3.0`
    running = client.search_runs([experiment], "attributes.status = 'RUNNING'")
    assert running == []  # no run, nor trial, left running for ever


@pytest.mark.parametrize("name", list(ENDINGS))
def test_tensorboard_follow(endings: dict[str, Ending], listed: Any, name: str, tmp_path: Path) -> None:
    ending, verdict = endings[name], reference(listed, endings[name])
    # a process, so that a follow that never ends fails the cell (at the timeout) instead of hanging it
    result = trainwire(
        "export", "tensorboard", str(ending.out), "--logdir", str(tmp_path), "--follow", "--poll", "0.05"
    )
    assert result.returncode == (0 if verdict["exit_code"] is not None else NOT_FINISHED_EXIT_CODE)  # as `tail -f`
    best = verdict["best"].get("loss")
    if best is not None and best["trial"] is not None:  # the best trial's outcome is the best value
        (trial_dir,) = tmp_path.glob(f"*/trial-{best['trial']}")
        outcome = accumulated(trial_dir).Scalars("trial/loss")
        assert [event.value for event in outcome] == [pytest.approx(best["value"])]
    if verdict["ended_by"] == "last_line":  # a run that died says so, as the others do
        (status,) = accumulated(tmp_path / ending.run_id).Tensors("status")
        assert status.tensor_proto.string_val[0].decode().startswith(verdict["status"])


def accumulated(directory: Path) -> EventAccumulator:
    accumulator = EventAccumulator(str(directory), size_guidance={"scalars": 0, "tensors": 0})
    accumulator.Reload()
    return accumulator


@pytest.mark.parametrize("name", list(ENDINGS))
def test_wandb(endings: dict[str, Ending], listed: Any, name: str, tmp_path: Path) -> None:
    ending, verdict = endings[name], reference(listed, endings[name])
    main(["export", "wandb", str(ending.out), "--dir", str(tmp_path)])
    offline = sorted((tmp_path / "wandb").glob(f"offline-run-*-{safe_name(ending.run_id)}"))
    found = records(offline[-1])
    (exit_record,) = of_type(found, "exit")
    assert exit_record.exit_code == exit_code_of(verdict)
    assert (exit_record.exit_code == 0) == (verdict["status"] == "succeeded")
    assert summary(found)["trainwire/status"] == verdict["status"]
    if verdict["params"] is not None:
        (trial,) = sorted((tmp_path / "wandb").glob(f"offline-run-*-{safe_name(ending.run_id)}-trial-3"))
        (started, *_) = of_type(records(trial), "run")
        config = {item.key: json.loads(item.value_json) for item in started.config.update}
        assert config["layers"] == 3 and type(config["layers"]) is int
