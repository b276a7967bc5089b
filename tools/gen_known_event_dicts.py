"""Generate the core schema of the known-event dict validator (`KNOWN_EVENT_DICTS`).

The readers' hot path and the writer's line check validate a line of a known event into a
plain dict with pydantic-core. Its core schema is derived here from the generated models'
own (every constraint, the discriminated union of `Line`, extra fields kept), with each
model turned into a typed dict whose optional fields stay absent when the line leaves them
out, and written as JSON: the package builds the validator from it with pydantic-core
alone, so neither the readers nor the writer build pydantic models to check a line.

Where the models are more lenient than the JSON Schema, the dict validator is made as
strict as the schema, so that its acceptance needs no check of the line's bytes: a
declared number refuses NaN and infinity (a bare token or an overflowing literal), an
integer constant (`schema_version`) refuses `true` and `1.0`, and an optional field the
schema does not let be null refuses an explicit `null`, and a timestamp must be a valid
date-time (`format: date-time`). Free-form values (`config`, extra fields) are the
decoder's to check.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import contract_facts
from _common import ROOT, dump_json

EVENTS_MODULE = Path("python/src/trainwire/_generated/events.py")
OUTPUT = Path("python/src/trainwire/_generated/known-event-dicts.core-schema.json")

_TIMESTAMP_WRITTEN_FOR = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?Z$"
#: the timestamp pattern narrowed to valid dates and times; February 29 and a leap second
#: (`:60`) fail it and go to the decoder's slow path, which knows leap years and 23:59:60
_VALID_TIMESTAMP = (
    r"^[0-9]{4}-(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31)"
    r"T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]{1,9})?Z$"
)

#: the validator's config, also set on each typed dict (a typed dict's fields take its own config)
STRICT: dict[str, Any] = {"strict": True}

#: keys of a core schema that describe the Python side only (classes, JSON Schema hints)
_PYTHON_ONLY = frozenset(
    {"cls", "ref", "metadata", "custom_init", "root_model", "post_init", "computed_fields", "model_name"}
)


def _load_events(path: Path) -> Any:
    """The generated models module at `path` (the drift check generates into another tree)."""
    name = "_trainwire_generated_events"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # pydantic resolves the models' annotations through it
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[name]
    return module


class _Derivation:
    def __init__(self, null_rules: dict[str, Any], timestamp: str) -> None:
        self.null_rules = null_rules
        self.timestamp = timestamp

    def typed_dicts(self, schema: Any) -> Any:
        """A core schema with every `model` replaced by the equivalent `typed-dict`."""
        if isinstance(schema, list):
            return [self.typed_dicts(item) for item in schema]
        if not isinstance(schema, dict):
            return schema
        kind = schema.get("type")
        if kind == "model":
            if schema.get("root_model"):
                return self.typed_dicts(schema["schema"])  # a RootModel is its value
            fields = schema["schema"]["fields"]
            config = schema.get("config", {})
            not_nullable = frozenset(self.null_rules.get(schema["cls"].__name__, {}).get("not_nullable", ()))
            return {
                "type": "typed-dict",
                "fields": {name: self._field(field, name in not_nullable) for name, field in fields.items()},
                "extra_behavior": config.get("extra_fields_behavior", "ignore"),
                "config": STRICT,
            }
        if kind == "str" and schema.get("pattern") == self.timestamp:
            return {**schema, "pattern": _VALID_TIMESTAMP}
        if kind == "float":
            return {**schema, "allow_inf_nan": False}
        if kind == "literal" and all(type(value) is int for value in schema["expected"]):
            # a literal integer matches `true` and `1.0` too; a strict integer first does not
            return {"type": "chain", "steps": [{"type": "int", "strict": True}, schema]}
        # strict throughout by the validator's config, which a schema's own `strict: False` would undo
        return {
            key: self.typed_dicts(value)
            for key, value in schema.items()
            if key not in _PYTHON_ONLY and not (key == "strict" and value is False)
        }

    def _field(self, field: dict[str, Any], not_nullable: bool) -> dict[str, Any]:
        inner = field["schema"]
        # a field with a default (always None in this contract) is optional: absent stays absent
        required = inner.get("type") != "default"
        if not required:
            inner = inner["schema"]
            if not_nullable:
                inner = _without_null(inner)
        return {"type": "typed-dict-field", "schema": self.typed_dicts(inner), "required": required}


def _without_null(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema of an optional field the JSON Schema does not let be null: its value only."""
    if schema.get("type") != "nullable":
        raise ValueError(f"a field the schema keeps from null is not nullable in its model: {schema!r}")
    inner: dict[str, Any] = schema["schema"]
    return inner


def _timestamp_pattern(events: Any) -> str:
    for constraint in events.Envelope.model_fields["ts"].metadata:
        pattern = getattr(constraint, "pattern", None)
        if isinstance(pattern, str):
            if pattern != _TIMESTAMP_WRITTEN_FOR:
                raise RuntimeError(
                    f"the contract's timestamp pattern changed to {pattern!r}: narrow it again in {__file__}"
                )
            return pattern
    raise LookupError("Envelope.ts has no pattern")


def core_schema(out_root: Path, bundles: Path) -> dict[str, Any]:
    """The known-event dict validator's core schema, from the models generated under `out_root`."""
    events = _load_events(out_root / EVENTS_MODULE)
    derivation = _Derivation(contract_facts.derive(bundles)["null_rules"], _timestamp_pattern(events))
    schema: dict[str, Any] = derivation.typed_dicts(events.Line.__pydantic_core_schema__)
    if schema.get("type") != "tagged-union":
        raise RuntimeError(f"Line is no longer a union discriminated by `event`: {schema.get('type')!r}")
    return schema


def generate(out_root: Path, bundles: Path) -> None:
    # strict by the validator's config, not by argument: a keyword argument costs about 8% of a call
    validator = {"schema": core_schema(out_root, bundles), "config": STRICT}
    (out_root / OUTPUT).write_text(dump_json(validator), encoding="utf-8")


if __name__ == "__main__":
    generate(ROOT, ROOT / "schemas" / "bundled")
