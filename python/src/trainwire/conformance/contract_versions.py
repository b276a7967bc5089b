"""Which contract version a case needs, and a state as a reader of the released contract (1.0) writes it.

A 1.0 reader passes every 1.0 case: such a case's states are compared on the fields of the
released reader state (`suite/reader-state-1.0.schema.json`, the snapshot the compatibility
gate holds the reader-state schema to), so the fields 1.1 added to the state are left out.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

__all__ = ["FIRST_CONTRACT", "released_state_fields"]

#: the contract version a case needs when its `case.json` says none
FIRST_CONTRACT = "1.0"


@cache
def _released_state_schema(suite: Path) -> dict[str, Any]:
    return json.loads((suite / "reader-state-1.0.schema.json").read_text(encoding="utf-8"))


def released_state_fields(state: Any, suite: Path) -> Any:
    """`state` with only the fields the released reader state of `suite` has (at every depth)."""
    schema = _released_state_schema(suite)
    return _project(state, schema, schema["$defs"])


def _project(value: Any, schema: dict[str, Any], defs: dict[str, Any]) -> Any:
    while "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
    for branch in schema.get("anyOf", ()):  # the alternative of the value's own shape
        resolved = branch
        while "$ref" in resolved:
            resolved = defs[resolved["$ref"].rsplit("/", 1)[-1]]
        if (isinstance(value, dict) and "properties" in resolved) or (isinstance(value, list) and "items" in resolved):
            return _project(value, resolved, defs)
    if isinstance(value, dict) and "properties" in schema:
        fields = schema["properties"]
        return {key: _project(item, fields[key], defs) for key, item in value.items() if key in fields}
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_project(item, schema["items"], defs) for item in value]
    return value
