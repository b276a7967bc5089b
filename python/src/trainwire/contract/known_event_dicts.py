"""The known events validated into plain dicts with pydantic-core alone: the readers' hot
path and the writer's line check.

pydantic-core validates a line into a `dict` about twice as fast as it builds a model
instance, and faster than `json.loads` parses it. The validator's core schema is generated
from the models' own by `tools/gen_known_event_dicts.py` (which says how it is made as
strict as the JSON Schema), so that checking a line builds no pydantic model: the writer
starts without importing pydantic. A key of a validated dict is present exactly when the
model's field would be set.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic_core import SchemaValidator, ValidationError

from trainwire.contract.line_bytes import finite_tokens, shallow

__all__ = [
    "KNOWN_EVENT_CORE_SCHEMA",
    "KNOWN_EVENT_DICTS",
    "event_field_pattern",
    "event_field_schema",
    "event_field_values",
    "plain_known_event",
]

_GENERATED = Path(__file__).resolve().parent.parent / "_generated" / "known-event-dicts.core-schema.json"
_VALIDATOR: dict[str, Any] = json.loads(_GENERATED.read_text(encoding="utf-8"))

#: the validator's core schema (a tagged union on `event`), which the fast decoder translates
KNOWN_EVENT_CORE_SCHEMA: dict[str, Any] = _VALIDATOR["schema"]
#: validates a line (JSON bytes) of a known event into a dict, strictly: `validate_json(line)`
KNOWN_EVENT_DICTS = SchemaValidator(_VALIDATOR["schema"], _VALIDATOR["config"])
_validate_known = KNOWN_EVENT_DICTS.validate_json


def plain_known_event(content: bytes) -> dict[str, Any] | None:
    """The event of a line within the length limit when the dict validator's answer stands
    as the JSON Schema's (a known event, no non-finite token, not nested too deep); None
    when the decoder's slow path must decide."""
    try:
        event: dict[str, Any] = _validate_known(content)
    except (ValidationError, TypeError):
        return None
    return event if shallow(content) and finite_tokens(content) else None


def _field_nodes(event: str, name: str, *, items: bool = False) -> Iterator[dict[str, Any]]:
    """The core schema of `event`'s field `name` and every schema it wraps (nullable, chain;
    with `items`, a list's items)."""
    pending = [_VALIDATOR["schema"]["choices"][event]["fields"][name]["schema"]]
    while pending:
        node = pending.pop()
        yield node
        for wrapped in ("schema", "items_schema") if items else ("schema",):
            if isinstance(node.get(wrapped), dict):
                pending.append(node[wrapped])
        pending.extend(node.get("steps", ()))


def event_field_values(event: str, name: str) -> frozenset[Any]:
    """The values the contract allows in the field `name` of `event` (its enum, or its items')."""
    return frozenset(
        value
        for node in _field_nodes(event, name, items=True)
        if node["type"] == "literal"
        for value in node["expected"]
    )


def event_field_schema(event: str, name: str) -> dict[str, Any]:
    """The core schema of `event`'s field `name` (a copy): a writer checks one value with it."""
    schema: dict[str, Any] = copy.deepcopy(_VALIDATOR["schema"]["choices"][event]["fields"][name]["schema"])
    return schema


def event_field_pattern(event: str, name: str) -> str:
    """The pattern of the string field `name` of `event`, without its anchors."""
    for node in _field_nodes(event, name):
        if node["type"] == "str" and "pattern" in node:
            pattern: str = node["pattern"]
            return pattern.removeprefix("^").removesuffix("$")
    raise LookupError(f"{event}.{name} has no pattern")
