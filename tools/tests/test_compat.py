"""The compatibility gate fires on each breaking change and lets an additive one through."""

from __future__ import annotations

import copy
import json

import bundle
import compat
import pytest


@pytest.fixture(scope="module")
def current() -> dict:
    return bundle.bundle(bundle.FAMILIES["trainwire-v1"], "trainwire-v1")


def _rules(old: dict, new: dict) -> list[tuple[str, str]]:
    return [(v.rule, v.path) for v in compat.compare(old, new)]


def test_current_schemas_are_compatible_with_the_release() -> None:
    assert compat.check_against_release() == []


def test_identical_bundles_pass(current: dict) -> None:
    assert _rules(current, copy.deepcopy(current)) == []


def test_removed_event(current: dict) -> None:
    new = copy.deepcopy(current)
    new["oneOf"] = [ref for ref in new["oneOf"] if ref["$ref"] != "#/$defs/TrialStarted"]
    assert ("event-removed", "/events/trial.started") in _rules(current, new)


def test_removed_field(current: dict) -> None:
    new = copy.deepcopy(current)
    del new["$defs"]["TrainStep"]["properties"]["grad_norm"]
    assert ("field-removed", "/events/train.step/properties/grad_norm") in _rules(current, new)


def test_removed_field_in_a_shared_definition_is_caught_where_it_is_used(current: dict) -> None:
    new = copy.deepcopy(current)
    del new["$defs"]["ErrorInfo"]["properties"]["type"]
    rules = _rules(current, new)
    assert ("field-removed", "/events/run.finished/properties/error/anyOf/0/properties/type") in rules
    assert ("field-removed", "/events/trial.ended/properties/error/anyOf/0/properties/type") in rules


def test_changed_type(current: dict) -> None:
    new = copy.deepcopy(current)
    new["$defs"]["CheckpointSaved"]["properties"]["path"] = {"type": "integer", "description": "now a number"}
    assert ("type-changed", "/events/checkpoint.saved/properties/path") in _rules(current, new)


def test_removed_enum_value(current: dict) -> None:
    new = copy.deepcopy(current)
    new["$defs"]["RunFinished"]["properties"]["status"]["enum"].remove("reverted")
    assert ("enum-value-removed", "/events/run.finished/properties/status") in _rules(current, new)


def test_optional_field_made_required(current: dict) -> None:
    new = copy.deepcopy(current)
    new["$defs"]["TrainStep"]["required"].append("grad_norm")
    assert ("optional-made-required", "/events/train.step/properties/grad_norm") in _rules(current, new)


def test_new_required_field(current: dict) -> None:
    new = copy.deepcopy(current)
    new["$defs"]["PhaseStarted"]["properties"]["owner"] = {"type": "string", "description": "who"}
    new["$defs"]["PhaseStarted"]["required"].append("owner")
    assert ("new-required-field", "/events/phase.started/properties/owner") in _rules(current, new)


def test_new_optional_field_without_description(current: dict) -> None:
    new = copy.deepcopy(current)
    new["$defs"]["PhaseStarted"]["properties"]["owner"] = {"type": "string"}
    assert _rules(current, new) == [("undescribed-new-field", "/events/phase.started/properties/owner")]


def test_additive_change_passes(current: dict) -> None:
    new = copy.deepcopy(current)
    new["$defs"]["PhaseStarted"]["properties"]["owner"] = {"type": "string", "description": "Who started the phase."}
    new["$defs"]["RunFinished"]["properties"]["status"]["enum"].append("cancelled")
    assert _rules(current, new) == []


@pytest.fixture
def state() -> dict:
    return copy.deepcopy(bundle.bundle(bundle.FAMILIES["reader-state-v1"], "reader-state-v1"))


def test_the_reader_state_is_compatible_with_the_released_one() -> None:
    released = json.loads(compat.RELEASED_READER_STATE.read_text(encoding="utf-8"))
    assert compat.compare_reader_state(released, state_bundle()) == []


def test_a_new_required_field_of_the_reader_state_is_refused(state: dict) -> None:
    # a state a reader of the released contract writes would no longer be valid
    changed = copy.deepcopy(state)
    changed["$defs"]["RunState"]["required"].append("phase_progress")
    assert [v.rule for v in compat.compare_reader_state(state, changed)] == ["optional-made-required"]
    changed = copy.deepcopy(state)
    changed["$defs"]["RunState"]["properties"]["x_new"] = {"type": "string", "description": "new"}
    changed["$defs"]["RunState"]["required"].append("x_new")
    assert [v.rule for v in compat.compare_reader_state(state, changed)] == ["new-required-field"]


def test_a_removed_field_of_the_reader_state_is_refused(state: dict) -> None:
    changed = copy.deepcopy(state)
    del changed["$defs"]["RunState"]["properties"]["stop_requested"]
    assert [v.rule for v in compat.compare_reader_state(state, changed)] == ["field-removed"]


def state_bundle() -> dict:
    return bundle.bundle(bundle.FAMILIES["reader-state-v1"], "reader-state-v1")


def test_the_suite_compares_1_0_cases_on_the_released_reader_state() -> None:
    # the conformance runner ships its own copy (the package has no schemas/ directory)
    suite_copy = compat.SCHEMAS.parent / "python/src/trainwire/conformance/suite/reader-state-1.0.schema.json"
    assert suite_copy.read_bytes() == compat.RELEASED_READER_STATE.read_bytes()
