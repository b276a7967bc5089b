"""Writer scenarios played through the real emitter (`trainwire.conformance.scenario.play`)."""

from __future__ import annotations

import json
import threading
from collections.abc import Collection
from typing import Any

import pytest
from support.paths import ROOT

from trainwire.conformance.paths import cases_dir
from trainwire.conformance.scenario import play
from trainwire.conformance.schema_check import validator_for
from trainwire.contract.models import EVENT_ADAPTER

CASES = cases_dir()

SCENARIO: dict[str, Any] = {
    "start_time": "2026-11-29T10:00:00Z",
    "step_interval_s": 1,
    "actions": [
        {
            "do": "start",
            "run_id": "first",
            "total_steps": 4,
            "heartbeat_interval_s": 10,
            "stage": {"name": "sft", "index": 1, "count": 2},
            "config": {"api_key": "k", "lr": 0.1},
        },
        {"do": "phase_start", "phase": "train"},
        {"do": "advance", "seconds": 0.5},
        {
            "do": "step",
            "step": 1,
            "loss": "NaN",
            "learning_rate": 0.1,
            "grad_norm": "Infinity",
            "metrics": {"m": "-Infinity", "n": 1},
        },
        {"do": "advance", "seconds": 0.5},
        {"do": "step", "step": 2, "loss": 1.0},
        {"do": "heartbeat"},
        {"do": "oom_restart", "batch_size_from": 8, "batch_size_to": 7},
        {"do": "advance", "seconds": 0.25},
        {"do": "step", "step": 1, "epoch": 0.5},
        {"do": "epoch", "epoch": 1, "step": 1, "metrics": {"loss": 0.5}},
        {"do": "eval", "step": 1, "metrics": {"loss": "NaN"}},
        {"do": "checkpoint", "step": 1, "path": "ckpt/1", "reason": "best"},
        {"do": "trial_start", "trial": 1, "params": {"lr": 0.1, "name": "NaN"}},
        {
            "do": "trial_end",
            "trial": 1,
            "status": "succeeded",
            "metrics": {"loss": 0.5},
            "best": {"trial": 1, "metric": "loss", "value": "NaN"},
        },
        {"do": "request_stop", "source": "signal", "signal": "SIGTERM"},
        {"do": "phase_end", "phase": "train", "status": "interrupted"},
        {"do": "extra", "event": "x_vendor.tick", "fields": {"x_value": "Infinity", "x_name": "n"}},
        {"do": "finish", "status": "interrupted", "checkpoint": "ckpt/1"},
        {"do": "raw", "line": "not json\n"},
        {
            "do": "start",
            "run_id": "second",
            "total_steps": None,
            "resumed_from": {"run_id": "first", "checkpoint": "ckpt/1", "step": 1},
        },
        {"do": "fail", "error_type": "RuntimeError", "message": "e" * 250},
    ],
}


def lines_of(stream: bytes, raw: Collection[bytes] = ()) -> list[dict[str, Any]]:
    """The stream's lines, each validated strictly, except the raw ones the scenario appended."""
    events = []
    for line in stream.splitlines(keepends=True):
        if line in raw:
            continue
        EVENT_ADAPTER.validate_json(line, strict=True)
        events.append(json.loads(line))
    return events


def test_the_test_scenario_follows_the_scenario_schema() -> None:
    errors = list(validator_for("harness-v1", "Scenario").iter_errors(SCENARIO))
    assert not errors, errors[0].message


def test_a_scenario_with_every_action() -> None:
    stream = play(SCENARIO)
    assert b"NaN" not in stream.replace(b'"name":"NaN"', b"") and b"Infinity" not in stream
    assert b"\nnot json\n" in stream
    events = lines_of(stream, {b"not json\n"})
    first = [event for event in events if event["run_id"] == "first"]
    second = [event for event in events if event["run_id"] == "second"]
    assert [event["seq"] for event in first] == list(range(1, len(first) + 1))
    assert [event["seq"] for event in second] == [1, 2]
    by_name = {event["event"]: event for event in first}

    started = first[0]
    assert started["config"] == {"api_key": "<redacted>", "lr": 0.1}
    assert started["heartbeat_interval_s"] == 10 and "provenance" not in started
    assert all(event["stage"] == {"name": "sft", "index": 1, "count": 2} for event in first)
    steps = [event for event in first if event["event"] == "train.step"]
    assert [(s["step"], s["loss"], s.get("grad_norm", "-")) for s in steps] == [
        (1, None, None),
        (2, 1.0, "-"),
        (1, None, "-"),
    ]
    assert steps[0]["metrics"] == {"m": None, "n": 1}
    assert by_name["run.heartbeat"]["phase"] == "train" and by_name["run.heartbeat"]["step"] == 2
    restarted = by_name["train.restarted"]
    assert (restarted["attempt"], restarted["previous_step"], restarted["step"]) == (2, 2, 0)
    assert (restarted["batch_size_from"], restarted["batch_size_to"]) == (8, 7) and "total_steps" not in restarted
    assert by_name["eval.completed"]["metrics"] == {"loss": None}
    assert by_name["trial.started"]["params"] == {"lr": 0.1, "name": "NaN"}  # a string param stays a string
    assert by_name["trial.ended"]["best"]["value"] is None and by_name["trial.ended"]["error"] is None
    assert by_name["x_vendor.tick"]["x_value"] is None and by_name["x_vendor.tick"]["x_name"] == "n"
    finished = by_name["run.finished"]
    assert (finished["reason"], finished["exit_code"], finished["checkpoint"], finished["duration_s"]) == (
        "sigterm",
        2,
        "ckpt/1",
        1.25,
    )
    assert second[0]["resumed_from"] == {"run_id": "first", "checkpoint": "ckpt/1", "step": 1}
    assert second[1]["error"] == {"type": "RuntimeError", "message": "e" * 200}


def test_playing_is_deterministic_and_starts_no_thread() -> None:
    before = set(threading.enumerate())
    assert play(SCENARIO) == play(SCENARIO)
    assert set(threading.enumerate()) == before


def test_every_conformance_scenario_plays_into_valid_lines() -> None:
    scenarios = sorted(CASES.glob("*/scenario.json"))
    assert scenarios, f"no scenarios under {CASES}"
    for path in scenarios:
        scenario = json.loads(path.read_text("utf-8"))
        raw = {action["line"].encode() for action in scenario["actions"] if action["do"] == "raw"}
        stream = play(scenario)
        events = lines_of(stream, raw)
        assert events, path
        for run_id in {event["run_id"] for event in events}:
            seqs = [event["seq"] for event in events if event["run_id"] == run_id]
            assert seqs == list(range(1, len(seqs) + 1)), path


@pytest.mark.parametrize(
    "actions",
    [
        [{"do": "step", "step": 1}],  # before any start
        [{"do": "start", "run_id": "r"}, {"do": "dance"}],
        [{"do": "start", "run_id": "r"}, {"do": "checkpoint", "step": 1}],  # no path
    ],
)
def test_a_malformed_scenario_raises_value_error(actions: list[dict[str, Any]]) -> None:
    with pytest.raises(ValueError):
        play({"start_time": "2026-11-29T10:00:00Z", "actions": actions})


def _schema_defaults() -> list[tuple[str | None, str, Any]]:
    """(action or None for the scenario itself, field, default) from the scenario schema."""
    schema = json.loads((ROOT / "schemas" / "harness" / "v1" / "scenario.schema.json").read_text())
    found: list[tuple[str | None, str, Any]] = [
        (None, name, prop["default"]) for name, prop in schema["properties"].items() if "default" in prop
    ]
    for branch in schema["properties"]["actions"]["items"]["allOf"]:
        action = branch["if"]["properties"]["do"]["const"]
        found += [
            (action, name, prop["default"])
            for name, prop in branch["then"].get("properties", {}).items()
            if "default" in prop
        ]
    return found


#: the smallest valid form of each action with a default, the defaulted field left out
_BARE_ACTIONS: dict[str, dict[str, Any]] = {
    "phase_end": {"do": "phase_end", "phase": "train"},
    "eval": {"do": "eval", "step": 1, "metrics": {}},
    "checkpoint": {"do": "checkpoint", "step": 1, "path": "ckpt"},
    "phase_count": {"do": "phase_count"},
    "oom_restart": {"do": "oom_restart"},
    "trial_start": {"do": "trial_start", "trial": 1, "params": {}},
    "trial_end": {"do": "trial_end", "trial": 1, "status": "succeeded", "metrics": {}},
}


@pytest.mark.parametrize(("action", "field", "default"), _schema_defaults())
def test_each_default_of_the_scenario_schema_is_what_the_player_uses(
    action: str | None, field: str, default: Any
) -> None:
    def scenario(given: bool) -> dict[str, Any]:
        actions: list[dict[str, Any]] = [
            {"do": "start", "run_id": "r", "total_steps": 4},
            {"do": "phase_start", "phase": "train"},
            {"do": "step", "step": 1},
            {"do": "advance", "seconds": 0.5},
            {"do": "step", "step": 2},
        ]
        top: dict[str, Any] = {"start_time": "2026-11-29T10:00:00Z", "actions": actions}
        if action is None:
            if given:
                top[field] = default
        else:
            bare = dict(_BARE_ACTIONS[action])
            if given:
                bare[field] = default
            actions.append(bare)
        actions.append({"do": "finish", "status": "succeeded"})
        return top

    assert b"train.step" in play(scenario(False))
    assert play(scenario(False)) == play(scenario(True))
