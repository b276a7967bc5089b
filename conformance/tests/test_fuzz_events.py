"""Fuzzing (a): events generated from the bundle are accepted by the Python models, by
jsonschema and by ajv (through the TypeScript harness); mutated ones are rejected by all three."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from functools import cache
from typing import Any

import pytest
from conformance_support import FUZZ, ReaderSession, typescript_argv
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from pydantic import ValidationError

from trainwire.conformance.schema_check import load_bundle, validator_for
from trainwire.contract.models import EVENT_ADAPTER, EVENT_MODELS

EVENTS = sorted(EVENT_MODELS)
EPOCH = datetime(2000, 1, 1, tzinfo=timezone.utc)
RELATIVE_PATHS = ["checkpoints/checkpoint-1", "a", ".hidden/x", "..a/b", "étape/🚀", "model.safetensors"]


@cache
def _definition_of(event: str) -> str:
    bundle = load_bundle()
    return next(
        name
        for name, schema in bundle["$defs"].items()
        if schema.get("properties", {}).get("event", {}).get("const") == event
    )


@cache
def event_strategy(event: str) -> st.SearchStrategy[dict[str, Any]]:
    """Lines of one event, from the bundle; `ts` and `run_id` drawn here (patterns plus
    `format: date-time` are beyond hypothesis-jsonschema, and Python's `$` differs from ECMA's)."""
    defs = json.loads(json.dumps(load_bundle()["$defs"]))
    defs["Timestamp"] = {"const": "2026-11-29T10:00:00.000000Z"}
    defs["RunId"] = {"const": "run"}
    # Drawing from these patterns is slow and, with Python's `$`, often invalid: valid samples instead.
    defs["RelativePath"] = {"enum": RELATIVE_PATHS}
    defs["PhaseName"] = {"enum": ["train", "model_load", "x", "phase_2", "a" * 64]}
    schema = {"$defs": defs, "$ref": f"#/$defs/{_definition_of(event)}"}
    timestamps = st.integers(0, 40 * 365 * 86400 * 10**6).map(
        lambda us: (EPOCH + timedelta(microseconds=us)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    )
    run_ids = st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9._:-]{0,20}\Z")
    return st.builds(
        lambda line, ts, run_id: {**line, "ts": ts, "run_id": run_id}, from_schema(schema), timestamps, run_ids
    )


def python_accepts(line: dict[str, Any]) -> bool:
    try:
        EVENT_ADAPTER.validate_json(json.dumps(line), strict=True)
    except ValidationError:
        return False
    return True


def jsonschema_accepts(line: dict[str, Any]) -> bool:
    return validator_for().is_valid(line)


@pytest.fixture(scope="module")
def typescript() -> Iterator[ReaderSession]:
    session = ReaderSession(typescript_argv())
    yield session
    session.close()


def typescript_codes(session: ReaderSession, line: dict[str, Any]) -> list[str]:
    """The diagnostic codes the TypeScript reader gives the line, alone in a stream."""
    data = json.dumps(line, ensure_ascii=False).encode() + b"\n"
    return [diagnostic["code"] for diagnostic in session.state([data])["diagnostics"]]


# Parametrised over 13 events: a third of the profile's budget each keeps `make test` short.
FUZZ_SETTINGS = settings(
    FUZZ,
    max_examples=max(FUZZ.max_examples // 3, 10),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)


def _wrong_type(value: Any) -> Any:
    # No required field of a v1 event accepts an array; the one array-valued field would get a string.
    return [] if not isinstance(value, list) else "not a list"


@pytest.mark.parametrize("event", EVENTS)
@FUZZ_SETTINGS
@given(data=st.data())
def test_generated_events_are_accepted_and_mutated_ones_rejected_alike(typescript, event, data):
    line = data.draw(event_strategy(event))
    assume(jsonschema_accepts(line))  # generated from the schema, but its regexes are Python's
    line["seq"] = 1  # alone in its stream: no seq diagnostics
    assert python_accepts(line), line
    assert typescript_codes(typescript, line) == [], line

    required = sorted(
        set(load_bundle()["$defs"][_definition_of(event)]["required"]) | {"schema_version", "seq", "ts", "run_id"}
    )
    field = data.draw(st.sampled_from(required), label="mutated field")
    if data.draw(st.booleans(), label="drop it (else: wrong type)"):
        del line[field]
    else:
        line[field] = _wrong_type(line[field])
    assert not jsonschema_accepts(line), line
    assert not python_accepts(line), line
    assert typescript_codes(typescript, line) == ["schema_violation"], line
