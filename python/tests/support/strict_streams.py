"""Shared by the writer tests of trials, phase progress and rollbacks: a real run on a fake
clock writing a real file, and every line it wrote held to the strict form of its schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from trainwire.conformance.schema_check import load_bundle, validator_for
from trainwire.contract.clock import FakeClock
from trainwire.contract.models import LINE_ADAPTER
from trainwire.writer.run import Run

START = "2026-12-01T10:00:00Z"


def _declared_fields() -> dict[str, set[str]]:
    """Event name -> the fields its schema declares, the envelope's included."""
    bundle = load_bundle()
    defs = bundle["$defs"]
    envelope = set(defs["Envelope"]["properties"])
    declared = {}
    for ref in bundle["oneOf"]:
        event = defs[ref["$ref"].rsplit("/", 1)[-1]]
        declared[event["properties"]["event"]["const"]] = envelope | set(event["properties"])
    return declared


DECLARED = _declared_fields()
VALIDATOR = validator_for()


def strict_lines(path: Path) -> list[dict[str, Any]]:
    """Every line of `path`, each valid against the contract's union (strict types, no
    unknown event), the JSON Schema, and with no field its schema does not declare."""
    events = []
    for raw in path.read_bytes().splitlines(keepends=True):
        assert raw.endswith(b"\n")
        LINE_ADAPTER.validate_json(raw, strict=True)
        event = json.loads(raw)
        errors = [error.message for error in VALIDATOR.iter_errors(event)]
        assert not errors, (event, errors)
        assert set(event) <= DECLARED[event["event"]], (event["event"], set(event) - DECLARED[event["event"]])
        events.append(event)
    return events


def file_run(output_dir: Path, **options: Any) -> tuple[Run, FakeClock, Path]:
    """A strict run writing `progress.jsonl` into `output_dir` on a fake clock."""
    clock = FakeClock(START)
    options = {"run_id": "c11", "heartbeat_interval_s": None, "journal": False, "strict": True, **options}
    return Run(output_dir, clock=clock, rank=0, **options), clock, output_dir / "progress.jsonl"


def of(events: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [event for event in events if event["event"] == name]
