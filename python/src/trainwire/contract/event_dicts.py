"""The known events validated into plain dicts: the readers' hot path.

pydantic-core validates a line into a `dict` about twice as fast as it builds a model
instance, and faster than `json.loads` parses it. The validator is derived at import from
the generated models' own core schema (every constraint, the discriminated union, extra
fields kept), with each model turned into a typed dict whose optional fields stay absent
when the line leaves them out: a key is present exactly when the model's field is set.
`event_model` turns a dict into the model the line validates to, `event_dict` back.

Where the models are more lenient than the JSON Schema, the dict validator is made as
strict as the schema, so that its acceptance needs no check of the line's bytes: a
declared number refuses NaN and infinity (a bare token or an overflowing literal), an
integer constant (`schema_version`) refuses `true` and `1.0`, and an optional field the
schema does not let be null refuses an explicit `null`, and a timestamp must be a valid
date-time (`format: date-time`). Free-form values (`config`, extra fields) are the
decoder's to check.
"""

from __future__ import annotations

from typing import Any

from pydantic_core import CoreConfig, SchemaValidator

from trainwire._generated.contract import NULL_RULES
from trainwire.contract.models import EVENT_ADAPTER, KNOWN_EVENT_ADAPTER, Envelope, field_pattern

__all__ = ["KNOWN_EVENT_DICTS", "event_dict", "event_model"]

#: the contract's timestamp pattern, which says nothing of the calendar or the clock
_TIMESTAMP = "^" + field_pattern(Envelope, "ts") + "$"
_TIMESTAMP_WRITTEN_FOR = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?Z$"
#: `_TIMESTAMP` narrowed to valid dates and times; February 29 and a leap second (`:60`) fail
#: it and go to the decoder's slow path, which knows leap years and 23:59:60
_VALID_TIMESTAMP = (
    r"^[0-9]{4}-(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31)"
    r"T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]{1,9})?Z$"
)
if _TIMESTAMP != _TIMESTAMP_WRITTEN_FOR:
    raise RuntimeError(f"the contract's timestamp pattern changed to {_TIMESTAMP!r}: narrow it again in {__name__}")

_STRICT = CoreConfig(strict=True)

#: keys of a core schema that describe the Python side only (classes, JSON Schema hints)
_PYTHON_ONLY = frozenset(
    {"cls", "ref", "metadata", "custom_init", "root_model", "post_init", "computed_fields", "model_name"}
)


def _as_typed_dicts(schema: Any) -> Any:
    """A core schema with every `model` replaced by the equivalent `typed-dict`."""
    if isinstance(schema, list):
        return [_as_typed_dicts(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    kind = schema.get("type")
    if kind == "model":
        if schema.get("root_model"):
            return _as_typed_dicts(schema["schema"])  # a RootModel is its value
        fields = schema["schema"]["fields"]
        config = schema.get("config", {})
        rule = NULL_RULES.get(schema["cls"].__name__)
        not_nullable = frozenset(rule.not_nullable if rule else ())
        typed: dict[str, Any] = {
            "type": "typed-dict",
            "fields": {name: _typed_dict_field(field, name in not_nullable) for name, field in fields.items()},
            "extra_behavior": config.get("extra_fields_behavior", "ignore"),
            # a typed dict's fields take its config, not the validator's: strict in each
            "config": _STRICT,
        }
        return typed
    if kind == "str" and schema.get("pattern") == _TIMESTAMP:
        return {**schema, "pattern": _VALID_TIMESTAMP}
    if kind == "float":
        return {**schema, "allow_inf_nan": False}
    if kind == "literal" and all(type(value) is int for value in schema["expected"]):
        # a literal integer matches `true` and `1.0` too; a strict integer first does not
        return {"type": "chain", "steps": [{"type": "int", "strict": True}, schema]}
    # strict throughout by the validator's config, which a schema's own `strict: False` would undo
    return {
        key: _as_typed_dicts(value)
        for key, value in schema.items()
        if key not in _PYTHON_ONLY and not (key == "strict" and value is False)
    }


def _typed_dict_field(field: dict[str, Any], not_nullable: bool) -> dict[str, Any]:
    inner = field["schema"]
    # a field with a default (always None in this contract) is optional: absent stays absent
    required = inner.get("type") != "default"
    if not required:
        inner = inner["schema"]
        if not_nullable:
            inner = _without_null(inner)
    return {"type": "typed-dict-field", "schema": _as_typed_dicts(inner), "required": required}


def _without_null(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema of an optional field the JSON Schema does not let be null: its value only."""
    if schema.get("type") != "nullable":
        raise ValueError(f"a field the schema keeps from null is not nullable in its model: {schema!r}")
    inner: dict[str, Any] = schema["schema"]
    return inner


#: validates a line (JSON bytes) of a known event into a dict, strictly: `validate_json(line)`
#: (strict by config, not by argument: a keyword argument costs about 8% of a call)
KNOWN_EVENT_DICTS = SchemaValidator(_as_typed_dicts(KNOWN_EVENT_ADAPTER.core_schema), _STRICT)


def event_model(event: dict[str, Any]) -> Any:
    """The typed event (a model of `trainwire.contract.models`) of a validated dict."""
    return EVENT_ADAPTER.validate_python(event)


def event_dict(event: Any) -> dict[str, Any]:
    """The validated dict of a typed event: the fields it sets, nested models as dicts."""
    dumped: dict[str, Any] = event.model_dump(exclude_unset=True)
    return dumped
