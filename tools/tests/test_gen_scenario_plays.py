"""The scenario player's table is generated from the scenario schema's annotations: every event
of the contract has an action that writes it, or generation stops and names the event."""

import copy
import json

import gen_scenario_plays
import pytest
from _common import SCHEMAS


def _events() -> list[str]:
    line = json.loads((SCHEMAS / "bundled" / "trainwire-v1.schema.json").read_text(encoding="utf-8"))
    return [
        line["$defs"][ref["$ref"].removeprefix("#/$defs/")]["properties"]["event"]["const"] for ref in line["oneOf"]
    ]


def _schema() -> dict:
    return json.loads(gen_scenario_plays.SCENARIO_SCHEMA.read_text(encoding="utf-8"))


def test_every_event_has_the_action_that_writes_it() -> None:
    table = gen_scenario_plays.plays(_schema())
    assert sorted(play["writes"] for play in table.values()) == sorted(_events())
    assert table["phase_end"]["defaults"] == {"status": "ok"}  # from the schema's own `default`


def test_an_event_no_action_writes_stops_generation() -> None:
    schema = copy.deepcopy(_schema())
    for branch in schema["properties"]["actions"]["items"]["allOf"]:
        branch["then"].pop(gen_scenario_plays.ANNOTATION, None) if branch["if"]["properties"]["do"][
            "const"
        ] == "epoch" else None
    with pytest.raises(SystemExit, match="train.epoch"):
        gen_scenario_plays._checked(gen_scenario_plays.plays(schema), _events())
