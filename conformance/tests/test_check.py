"""`trainwire conformance check` passes on the committed cases and fails on corrupted copies."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conformance_support import conformance

from trainwire.conformance.check import check_cases
from trainwire.conformance.paths import SUITE_DIR


@pytest.fixture
def copy(tmp_path) -> Path:
    """A copy of the packaged suite (without the large case, which nothing here corrupts)."""
    target = tmp_path / "suite"
    shutil.copytree(SUITE_DIR, target, ignore=shutil.ignore_patterns("line-over-limit"))
    return target


def test_check_passes_on_the_committed_cases():
    completed = conformance("check")
    assert completed.returncode == 0, completed.stderr
    assert "cases complete, valid and up to date" in completed.stdout


def test_check_fails_on_a_corrupted_copy_from_the_cli(copy):
    state = copy / "cases" / "seq-gap" / "expected-state.json"
    state.write_text(
        state.read_text(encoding="utf-8").replace('"running"', '"stale"').replace('"succeeded"', '"failed"'),
        encoding="utf-8",
    )
    completed = conformance("--suite", str(copy), "check")
    assert completed.returncode == 1
    assert "seq-gap: expected-state.json differs from what tools/gen_conformance.py writes" in completed.stderr


def _edit_json(path: Path, change) -> None:
    value = json.loads(path.read_text(encoding="utf-8"))
    change(value)
    path.write_text(json.dumps(value, indent=2), encoding="utf-8")


def test_check_names_each_kind_of_corruption(copy):
    cases = copy / "cases"
    _edit_json(cases / "minimal-run" / "case.json", lambda meta: meta.update(id="minimal"))
    (cases / "oom-restart" / "scenario.json").unlink()
    _edit_json(cases / "full-run" / "scenario.json", lambda scenario: scenario["actions"].append({"do": "teleport"}))
    _edit_json(cases / "seq-gap" / "expected-state.json", lambda state: state.update(lines=-1))
    _edit_json(cases / "stop-sigterm" / "case.json", lambda meta: meta.update(roles=["observer"]))
    stream = cases / "reverted-ending" / "stream.ndjson"
    stream.write_bytes(stream.read_bytes().replace(b'"seq":2,', b'"seq":"2",'))
    problems = "\n".join(check_cases(copy))
    assert "minimal-run: id 'minimal' differs from its folder name" in problems
    assert "oom-restart: missing scenario.json" in problems
    assert "full-run: scenario.json /actions/" in problems and "teleport" in problems
    assert "seq-gap: expected-state.json /lines: -1 is less than the minimum of 0" in problems
    assert "stop-sigterm: case.json /roles/0" in problems
    assert "reverted-ending: stream.ndjson line 2, $.seq" in problems


def test_check_finds_a_stale_golden_stream(copy):
    scenario = copy / "cases" / "minimal-run" / "scenario.json"
    _edit_json(scenario, lambda s: s["actions"].insert(1, {"do": "advance", "seconds": 1}))
    problems = check_cases(copy)
    assert (
        "minimal-run: stream.ndjson differs from what tools/gen_conformance.py writes (edited by hand, or not regenerated)"
        in problems
    )


def test_check_ignores_reworded_diagnostic_messages_only(copy):
    state_file = copy / "cases" / "seq-gap" / "expected-state.json"
    _edit_json(state_file, lambda state: state["diagnostics"][0].update(message="worded differently"))
    assert check_cases(copy) == []
    _edit_json(state_file, lambda state: state["diagnostics"][0].update(line=1))
    assert check_cases(copy) == [
        "seq-gap: expected-state.json differs from what tools/gen_conformance.py writes (edited by hand, or not regenerated)"
    ]
