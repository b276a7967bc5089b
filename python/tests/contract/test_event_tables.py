"""Every per-event table decides every event of the contract: Python's `assertNever`.

A table is keyed by event name and holds an entry for each event of the generated vocabulary,
`None` where the event deliberately has no effect there; or, where most events have no effect
(the exporters'), an entry for each event an annotation of its schema marks, and no other. A
new event in the schemas makes these tests fail, naming the file, the table and the event,
until each table decides what it does.
"""

from __future__ import annotations

import json
from importlib import import_module
from pathlib import Path
from typing import Any

import pytest
from support.paths import ROOT

from trainwire._generated.contract import EVENT_NAMES, TRACKER_EVENTS
from trainwire.conformance.scenario import EVENT_ACTIONS, play
from trainwire.conformance.schema_check import validator_for

SOURCES = ROOT / "python" / "src"
SCENARIO_SCHEMA = ROOT / "schemas" / "harness" / "v1" / "scenario.schema.json"
SCENARIO = validator_for("harness-v1", "Scenario")

#: module -> its per-event table (tables that hold a fact of the event, not code, are
#: annotations of its schema, generated: `x-trainwire-view-event`, `x-trainwire-step-role`, `x-trainwire-scalars`;
#: the scenario player's is the scenario schema's `x-trainwire-play`, generated too)
TABLES = {
    "trainwire.lines.state_fold": "_EFFECTS",
    "trainwire.lines.summary": "_HANDLERS",
    "trainwire.lines.series": "_ADD",
    "trainwire.cli.tail": "_DESCRIPTIONS",
}
#: module -> its table keyed by an annotation: the table holds the events whose schema states
#: the annotation true, and no other (every other event has no effect there)
MARKED_TABLES = {
    "trainwire.export.mlflow": ("EVENT_HANDLERS", "x-trainwire-tracker-event", TRACKER_EVENTS),
    "trainwire.export.tensorboard": ("EVENT_HANDLERS", "x-trainwire-tracker-event", TRACKER_EVENTS),
    "trainwire.export.wandb": ("EVENT_HANDLERS", "x-trainwire-tracker-event", TRACKER_EVENTS),
    "trainwire.export.kubeflow": ("EVENT_HANDLERS", "x-trainwire-tracker-event", TRACKER_EVENTS),
}


def _file(module: str) -> str:
    return str(Path(*module.split(".")).with_suffix(".py"))


@pytest.mark.parametrize(("module", "name"), TABLES.items())
def test_each_table_has_an_entry_for_every_event_and_no_other(module: str, name: str) -> None:
    table = getattr(import_module(module), name)
    missing = [
        f"{_file(module)}: {name} lacks {event!r} (add it; None where it has no effect)"
        for event in EVENT_NAMES
        if event not in table
    ]
    unknown = [
        f"{_file(module)}: {name} has {event!r}, not an event of the contract"
        for event in table
        if event not in EVENT_NAMES
    ]
    assert missing + unknown == []


@pytest.mark.parametrize(("module", "name", "annotation", "marked"), [(m, *t) for m, t in MARKED_TABLES.items()])
def test_each_marked_table_has_an_entry_for_every_event_marked_and_no_other(
    module: str, name: str, annotation: str, marked: frozenset[str]
) -> None:
    table = getattr(import_module(module), name)
    missing = [
        f"{_file(module)}: {name} lacks {event!r}, which its schema states {annotation}: true"
        " (add it; NotExported, with its reason, where this exporter has nothing to write)"
        for event in EVENT_NAMES
        if event in marked and event not in table
    ]
    unmarked = [
        f"{_file(module)}: {name} has {event!r}, which its schema states {annotation}: false"
        " (state it true, or drop the entry)"
        for event in table
        if event not in marked
    ]
    assert missing + unmarked == []


def _event_keys(text: str) -> int:
    return sum(f'"{event}": ' in text for event in EVENT_NAMES)


def test_the_tables_listed_are_every_table_in_the_sources() -> None:
    # a table keyed by event name that this file does not check would be a silent one again
    found = {
        ".".join(path.relative_to(SOURCES).with_suffix("").parts)
        for path in SOURCES.rglob("*.py")
        if "_generated" not in path.parts and _event_keys(path.read_text(encoding="utf-8")) >= 3
    }
    assert found == set(TABLES) | set(MARKED_TABLES)


def _action_items() -> dict[str, Any]:
    return json.loads(SCENARIO_SCHEMA.read_text(encoding="utf-8"))["properties"]["actions"]["items"]


def test_each_event_has_a_scenario_action_the_player_and_the_schema_know() -> None:
    actions = _action_items()["properties"]["do"]["enum"]
    assert [f"{event}: {action}" for event, action in EVENT_ACTIONS.items() if action not in actions] == []


def test_each_event_action_has_an_example_in_the_scenario_schema() -> None:
    examples = {example["do"] for example in _action_items().get("examples", [])}
    assert [
        f"schemas/harness/v1/scenario.schema.json: actions.items.examples has none of {action!r}"
        f" (the action that writes {event}): add one with the fields it needs"
        for event, action in EVENT_ACTIONS.items()
        if action not in examples
    ] == []


def test_each_scenario_action_writes_its_event() -> None:
    # each action as the scenario schema's example of it gives it (the fields it needs)
    examples = {example["do"]: example for example in _action_items()["examples"]}
    start = examples["start"]
    # actions an action needs before it: items are counted within an open phase
    before = {"phase_count": [{"do": "phase_start", "phase": "eval", "total": 5}]}
    written = {}
    for event, action in EVENT_ACTIONS.items():
        actions = (
            [start] if action == "start" else [start, *before.get(action, []), examples.get(action, {"do": action})]
        )
        scenario = {"start_time": "2026-11-29T10:00:00Z", "actions": actions}
        assert list(SCENARIO.iter_errors(scenario)) == [], f"the example of {action!r} is no valid action"
        lines = play(scenario).splitlines()
        written[event] = json.loads(lines[-1])["event"]
    assert written == {event: event for event in EVENT_ACTIONS}
