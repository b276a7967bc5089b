"""Validate lines with `jsonschema` against the packaged bundle: the slow, independent check.

The readers validate with the generated models (fast); conformance tests and fuzzing
cross-check them with this module. Two gaps of plain jsonschema are closed here:
`format: date-time` is only checked with a format checker (and rfc3339-validator), and
Python's `re` lets `$` match before a final newline, which ECMA-262 (the dialect JSON
Schema patterns are written in) does not.
"""

from __future__ import annotations

import json
import math
import re
from functools import lru_cache
from importlib import resources
from typing import Any, Literal

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError

from trainwire.reader.decoder import MAX_NESTING, nesting_depth, parse_strict

Verdict = Literal["valid", "unknown", "invalid"]


def load_bundle(family: str = "trainwire-v1") -> dict[str, Any]:
    text = resources.files("trainwire._generated").joinpath("schemas", f"{family}.schema.json").read_text("utf-8")
    return json.loads(text)


@lru_cache(maxsize=64)
def _ecma_pattern(pattern: str) -> re.Pattern[str]:
    # `$` at the very end means end of input in ECMA-262 (no multiline flag); `\Z` in Python.
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + r"\Z"
    return re.compile(pattern)


def _pattern(validator: Any, pattern: str, instance: Any, schema: dict) -> Any:
    if validator.is_type(instance, "string") and not _ecma_pattern(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _finite(instance: Any) -> bool:
    # JSON has no infinities: an overflowing literal such as 1e400 is not a number here,
    # as it is not for ajv (Python's json module turns it into inf, and keeps a 309-digit
    # integer exact, where JavaScript reads Infinity).
    try:
        return math.isfinite(instance)
    except OverflowError:
        return False


def _is_finite_number(checker: Any, instance: Any) -> bool:
    return Draft202012Validator.TYPE_CHECKER.is_type(instance, "number") and _finite(instance)


def _is_finite_integer(checker: Any, instance: Any) -> bool:
    return Draft202012Validator.TYPE_CHECKER.is_type(instance, "integer") and _finite(instance)


_Validator = validators.extend(
    Draft202012Validator,
    {"pattern": _pattern},
    type_checker=Draft202012Validator.TYPE_CHECKER.redefine_many(
        {"number": _is_finite_number, "integer": _is_finite_integer}
    ),
)


@lru_cache(maxsize=8)
def validator_for(family: str = "trainwire-v1", definition: str | None = None) -> Any:
    """A validator for a bundle, or for one of its `$defs` (e.g. `Envelope`)."""
    bundle = load_bundle(family)
    if definition is not None:
        bundle = {"$schema": bundle["$schema"], "$defs": bundle["$defs"], "$ref": f"#/$defs/{definition}"}
    return _Validator(bundle, format_checker=Draft202012Validator.FORMAT_CHECKER)


def line_verdict(text: str) -> Verdict:
    """What a reader must do with one line: deliver it (valid/unknown) or skip it (invalid)."""
    try:
        value = parse_strict(text)
    except (ValueError, RecursionError):
        return "invalid"
    if not isinstance(value, dict) or nesting_depth(value) > MAX_NESTING:
        return "invalid"
    if validator_for().is_valid(value):
        return "valid"
    from trainwire.contract.models import EVENT_NAMES

    event = value.get("event")
    names_an_event = isinstance(event, str) and event in EVENT_NAMES  # an object or array names none
    if not names_an_event and validator_for(definition="Envelope").is_valid(value):
        return "unknown"
    return "invalid"
