"""The event schemas are the list of events: the `Line` union and the per-event facts come from them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import event_schemas
import gen_source_regions
import pytest
from _common import ROOT


@pytest.fixture
def events(tmp_path: Path) -> Path:
    """A copy of the event schemas with a new event, `x.dummy`, placed between two others."""
    folder = tmp_path / "events"
    shutil.copytree(event_schemas.EVENTS_DIR, folder)
    dummy = json.loads((folder / "run-heartbeat.schema.json").read_text(encoding="utf-8"))
    dummy["title"], dummy["x-trainwire-order"] = "XDummy", 25
    dummy["properties"]["event"]["const"] = "x.dummy"
    (folder / "x-dummy.schema.json").write_text(json.dumps(dummy), encoding="utf-8")
    return folder


def _annotate(folder: Path, name: str, key: str, value: object = None, *, drop: bool = False) -> None:
    path = folder / name
    schema = json.loads(path.read_text(encoding="utf-8"))
    if drop:
        del schema[key]
    else:
        schema[key] = value
    path.write_text(json.dumps(schema), encoding="utf-8")


def test_the_line_union_takes_a_new_event_schema_at_the_place_it_states(events: Path) -> None:
    refs = [branch["$ref"] for branch in event_schemas.line_schema(events)["oneOf"]]
    assert refs[:4] == [
        "events/run-started.schema.json",
        "events/run-heartbeat.schema.json",
        "events/x-dummy.schema.json",
        "events/phase-started.schema.json",
    ]
    assert sorted(refs) == sorted(f"events/{path.name}" for path in events.glob("*.schema.json"))


def test_the_committed_line_union_is_the_one_the_event_schemas_make() -> None:
    committed = json.loads(event_schemas.LINE_SCHEMA.read_text(encoding="utf-8"))
    assert committed == event_schemas.line_schema()


@pytest.mark.parametrize("key", event_schemas.ANNOTATIONS)
def test_an_event_schema_that_leaves_a_decision_out_stops_the_generation(events: Path, key: str) -> None:
    _annotate(events, "x-dummy.schema.json", key, drop=True)
    with pytest.raises(SystemExit, match=rf"events/x-dummy.schema.json: state '{key}'"):
        event_schemas.load(events)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("x-trainwire-view-event", 1),
        ("x-trainwire-tracker-event", None),
        ("x-trainwire-step-role", "jumps"),
        ("x-trainwire-order", True),
        ("x-trainwire-scalars", {"prefix": "x", "fields": ["loss"]}),  # not a field of the event
        ("x-trainwire-scalars", {"fields": ["note"]}),
    ],
)
def test_an_annotation_of_the_wrong_value_stops_the_generation(events: Path, key: str, value: object) -> None:
    _annotate(events, "x-dummy.schema.json", key, value)
    with pytest.raises(SystemExit, match=rf"events/x-dummy.schema.json: {key} is"):
        event_schemas.load(events)


def test_an_unknown_annotation_or_a_place_stated_twice_stops_the_generation(events: Path) -> None:
    _annotate(events, "x-dummy.schema.json", "x-trainwire-view", True)
    with pytest.raises(SystemExit, match="unknown annotation 'x-trainwire-view'"):
        event_schemas.load(events)
    _annotate(events, "x-dummy.schema.json", "x-trainwire-view", drop=True)
    _annotate(events, "x-dummy.schema.json", "x-trainwire-order", 20)
    with pytest.raises(SystemExit, match=r"x-trainwire-order 20 is stated twice \(run-heartbeat.schema.json, x-dummy"):
        event_schemas.load(events)


def test_the_bundles_carry_no_annotation() -> None:
    for path in (ROOT / "schemas" / "bundled").glob("*.json"):
        assert "x-trainwire-" not in path.read_text(encoding="utf-8"), path.name


def test_source_regions_are_rewritten_at_their_indentation() -> None:
    facts = {"events": {"run.started": "RunStarted", "a.b": "AB"}}
    text = "x = [\n    # generated: event-model-names\n    'stale',\n    # end: event-model-names\n]\n"
    assert gen_source_regions.fill(text, facts, "x.py") == (
        'x = [\n    # generated: event-model-names\n    "RunStarted",\n    "AB",\n    # end: event-model-names\n]\n'
    )
    with pytest.raises(SystemExit, match="unknown generated region 'event-models'"):
        gen_source_regions.fill("# generated: event-models\n# end: event-models\n", facts, "x.py")
    with pytest.raises(SystemExit, match="no generated region"):
        gen_source_regions.fill("x = 1\n", facts, "x.py")
