"""The mapping from a run's progress to a TrainJob's `trainerStatus` agrees with the TrainJob
CRD vendored from kubeflow/trainer: its limits are the CRD's, and the bodies it makes at those
limits are valid and within the status server's 64 KiB."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import yaml
from support.kubeflow_server import CRD_EXCERPT, MAX_BODY, crd_errors

from trainwire.lines.state_fold import RunState
from trainwire.writer.kubeflow.progress import RunProgress, progress_of
from trainwire.writer.kubeflow.status_body import (
    MAX_BODY_BYTES,
    MAX_METRICS,
    MAX_NAME_CHARS,
    MAX_SECONDS,
    MAX_VALUE_CHARS,
    cut_name,
    cut_value,
    status_body,
)

NOW = datetime(2026, 12, 7, 13, 0, tzinfo=timezone.utc)


def _crd() -> dict:
    return yaml.safe_load(CRD_EXCERPT.read_text(encoding="utf-8"))["trainerStatus"]


def test_the_mappings_limits_are_the_vendored_crds() -> None:
    properties = _crd()["properties"]
    metric = properties["metrics"]["items"]["properties"]
    assert properties["metrics"]["maxItems"] == MAX_METRICS
    assert metric["name"]["maxLength"] == MAX_NAME_CHARS and metric["name"]["minLength"] == 1
    assert metric["value"]["maxLength"] == MAX_VALUE_CHARS and metric["value"]["minLength"] == 1
    assert properties["progressPercentage"]["minimum"] == 0 and properties["progressPercentage"]["maximum"] == 100
    assert properties["estimatedRemainingSeconds"]["format"] == "int32" and MAX_SECONDS == 2**31 - 1
    assert MAX_BODY_BYTES == MAX_BODY
    # the fields the mapping writes are the CRD's, and the one its CEL rule requires is always written
    written = json.loads(status_body(RunProgress("succeeded", eta_s=3, fraction=1.0, loss=0.5), NOW))["trainerStatus"]
    assert set(written) <= set(properties)
    assert [rule["rule"] for rule in _crd()["x-kubernetes-validations"]] == ["has(self.lastUpdatedTime)"]
    assert "lastUpdatedTime" in written


def test_a_body_at_every_limit_is_valid_and_within_64_kib() -> None:
    wide = "\U0001f600" * 100  # four bytes each: 256 metrics of 64 of them pass 64 KiB
    metrics = {f"{wide}{index}": wide for index in range(400)}
    progress = RunProgress("running", fraction=1.7, eta_s=1e12, loss=float("nan"), eval_metrics=metrics)
    body = status_body(progress, NOW)
    assert len(body) <= MAX_BODY_BYTES
    parsed = json.loads(body)
    assert crd_errors(parsed) == []
    status = parsed["trainerStatus"]
    assert status["progressPercentage"] == 99  # 100 only for a run that succeeded
    assert status["estimatedRemainingSeconds"] == MAX_SECONDS
    assert 100 < len(status["metrics"]) <= MAX_METRICS


def test_long_names_and_values_are_cut_by_the_stated_rule() -> None:
    name = "n" * 80
    assert cut_name(name)[:55] == "n" * 55 and cut_name(name)[55] == "~" and len(cut_name(name)) == 64
    assert cut_name(name) != cut_name(name + "x")
    assert cut_name("loss") == "loss"
    assert cut_value("v" * 70) == "v" * 61 + "..."
    body = json.loads(status_body(RunProgress("running", eval_metrics={"": 1, "empty": "", "x": None}), NOW))
    names = [metric["name"] for metric in body["trainerStatus"]["metrics"]]
    assert names == ["status"]  # an empty name or value, or none, is left out


def test_progress_is_read_from_the_folds_state() -> None:
    state = RunState("r").to_dict()
    state.update(step=30, total_steps=120, progress=0.25, eta_s=90.2, loss=0.5, learning_rate=1e-4, epoch=1.5)
    state["last_eval"] = {"step": 30, "epoch": 1.5, "split": "eval", "metrics": {"accuracy": 0.8, "eval_f1": 0.7}}
    status = json.loads(status_body(progress_of(state, total_epochs=3), NOW))["trainerStatus"]
    assert status["progressPercentage"] == 25 and status["estimatedRemainingSeconds"] == 91
    metrics = {metric["name"]: metric["value"] for metric in status["metrics"]}
    assert metrics == {
        "status": "running",
        "step": "30",
        "total_steps": "120",
        "epoch": "1.5",
        "total_epochs": "3",
        "loss": "0.5",
        "learning_rate": "0.0001",
        "eval_accuracy": "0.8",
        "eval_f1": "0.7",
    }
    assert status["lastUpdatedTime"] == "2026-12-07T13:00:00Z"
