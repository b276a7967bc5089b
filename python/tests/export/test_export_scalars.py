"""The scalars a tracker shows of each event are what its schema's `x-trainwire-scalars` says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.paths import ROOT

from trainwire.export.scalars import scalars_of

SCHEMAS = sorted((ROOT / "schemas" / "v1" / "events").glob("*.schema.json"))


@pytest.mark.parametrize("path", SCHEMAS, ids=lambda path: str(path.name))
def test_an_event_shows_the_fields_and_metrics_its_schema_names(path: Path) -> None:
    schema = json.loads(path.read_text(encoding="utf-8"))
    shown = schema["x-trainwire-scalars"]
    fields = [] if shown is None else shown.get("fields", [])
    event = {"event": schema["properties"]["event"]["const"], "metrics": {"acc": 0.5, "gone": None}}
    event.update(dict.fromkeys(fields, 2))
    expected = (
        {} if shown is None else {f"{shown['prefix']}/{name}": 2.0 for name in fields} | {f"{shown['prefix']}/acc": 0.5}
    )
    assert scalars_of(event) == expected


def test_an_evaluation_is_shown_under_its_split() -> None:
    assert scalars_of({"event": "eval.completed", "split": "val", "metrics": {"acc": 1}}) == {"val/acc": 1.0}
