"""Where the JSON Schema is stricter than pydantic: the exact checks of the decoder's slow
path, and the cheap byte tests that send a line there (reader rules, section 2).

pydantic reads bare NaN/Infinity, `true` for `schema_version: 1`, an explicit `null` for an
optional field that is not nullable, huge numbers as infinity and impossible dates; each
check here closes one of those gaps, so the reader agrees with a JSON Schema validator.
"""

from __future__ import annotations

import json
import math
import re
from functools import cache
from typing import Any, TypeGuard, get_args

from pydantic import BaseModel, ValidationError

from trainwire._generated.contract import NULL_RULES, NullRule
from trainwire.contract.event_dicts import event_model
from trainwire.contract.line_bytes import MAX_NESTING, shallow

#: how much of a bad line a diagnostic quotes
PREVIEW_CHARS = 80
#: enough bytes for 80 characters of UTF-8
PREVIEW_BYTES = 4 * PREVIEW_CHARS


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_strict(text: str) -> Any:
    """`json.loads` without the NaN/Infinity extension Python accepts by default."""
    return json.loads(text, parse_constant=_reject_constant)


#: every byte but `{`, `[` and the newline, deleted to count a body's openings line by line
_NOT_AN_OPENING = bytes(byte for byte in range(256) if byte not in b"{[\n")


def may_nest_too_deeply(body: bytes) -> bool:
    """`not shallow(line)` for some line of `body`, for all its lines at once."""
    openings = body.translate(None, _NOT_AN_OPENING)
    return len(openings) > MAX_NESTING and max(map(len, openings.split(b"\n"))) > MAX_NESTING


def nesting_depth(value: Any) -> int:
    """How deep a parsed JSON value nests: 0 for a scalar, 1 for a flat object or array."""
    deepest = 0
    pending = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, depth)
        pending.extend((child, depth + 1) for child in children)
    return deepest


def is_integer(value: Any) -> TypeGuard[int | float]:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array"


def integral_floats_to_int(value: Any) -> Any:
    """`5.0` is the integer 5 (JSON Schema's rule, the only one JavaScript can apply)."""
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if isinstance(value, dict):
        return {key: integral_floats_to_int(item) for key, item in value.items()}
    if isinstance(value, list):
        return [integral_floats_to_int(item) for item in value]
    return value


#: a `\\uD800`-`\\uDFFF` escape: the text may hold a lone surrogate once parsed
LONE_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE_CHARACTER = re.compile("[\ud800-\udfff]")


def replace_lone_surrogates(value: Any) -> Any:
    """The value with each lone surrogate replaced by U+FFFD: one code point for one, as the schema counts."""
    if isinstance(value, str):
        return _SURROGATE_CHARACTER.sub("\ufffd", value)
    if isinstance(value, dict):
        return {replace_lone_surrogates(key): replace_lone_surrogates(item) for key, item in value.items()}
    if isinstance(value, list):
        return [replace_lone_surrogates(item) for item in value]
    return value


def restore_strings(model: Any, original: dict[str, Any]) -> Any:
    """Puts the original values (lone surrogates and all) back into the validated model."""
    for name in [*type(model).model_fields, *(model.model_extra or ())]:
        if name not in original or replace_lone_surrogates(original[name]) == original[name]:
            continue
        current = getattr(model, name)
        if isinstance(current, BaseModel) and isinstance(original[name], dict):
            restore_strings(current, original[name])
        else:
            setattr(model, name, original[name])
    return model


def typed(event: dict[str, Any]) -> Any:
    """The typed event of a validated dict; one holding lone surrogates as the slow path built it."""
    try:
        return event_model(event)
    except ValidationError:
        return restore_strings(event_model(replace_lone_surrogates(event)), event)


def first_error(error: ValidationError) -> str:
    first = error.errors(include_url=False)[0]
    location = [str(part) for part in first["loc"]]
    if location and location[0] == "unknown":
        location[0] = "envelope"
    where = ".".join(location) or "line"
    more = error.error_count() - 1
    return f"{where}: {first['msg']}" + (f" (and {more} more)" if more else "")


def preview(content: bytes) -> str:
    """The start of the offending text (at most 80 characters) as a JSON string."""
    text = content[:PREVIEW_BYTES].decode("utf-8", "replace")
    cut = len(text) > PREVIEW_CHARS or len(content) > PREVIEW_BYTES
    return json.dumps(text[:PREVIEW_CHARS], ensure_ascii=False) + ("..." if cut else "")


# where pydantic accepts what the JSON Schema rejects


def trusted(content: bytes, event: Any) -> bool:
    """Whether pydantic's acceptance of the line stands as the JSON Schema's answer."""
    if b"NaN" in content or b"Infinity" in content or b"true" in content:
        return False  # bare non-finite tokens; `true` taken for `schema_version: 1`
    if not shallow(content) or may_overflow(content):
        return False
    return contract_gap(event) is None


#: every digit as `0`, so that a run of digits is found by a plain substring search
_DIGITS_AS_ZEROS = bytes.maketrans(b"0123456789", b"0" * 10)
_DIGIT_RUN_THAT_MAY_OVERFLOW = b"0" * 309  # 1e308 is the largest double's order


def may_overflow(body: bytes) -> bool:
    """Whether a number in `body` may overflow a double (a positive exponent, or 309 digits
    in a row, as in an integer literal beyond 1.8e308): for a whole body or one line."""
    if b"E" in body or b"e+" in body:
        return True
    digits_as_zeros = body.translate(_DIGITS_AS_ZEROS)
    return b"e0" in digits_as_zeros or _DIGIT_RUN_THAT_MAY_OVERFLOW in digits_as_zeros


def non_finite_field(value: Any, path: str) -> str | None:
    """The first declared number holding an infinite value (an overflowing literal), if any.

    Unknown fields and free-form objects (`config`) are left alone: the schema says nothing
    of their values, so they are kept as they are, as a JavaScript reader keeps them.
    """
    if isinstance(value, float):
        return path if not math.isfinite(value) else None
    if isinstance(value, BaseModel):
        for name in _typed_fields(type(value)):
            found = non_finite_field(getattr(value, name), f"{path}/{name}")
            if found:
                return found
    elif isinstance(value, dict):
        for key, item in value.items():
            found = non_finite_field(item, f"{path}/{key}")
            if found:
                return found
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            found = non_finite_field(item, f"{path}/{index}")
            if found:
                return found
    return None


@cache
def _typed_fields(model: type[BaseModel]) -> tuple[str, ...]:
    """The fields whose schema types their values (not `Any` anywhere in the annotation)."""
    return tuple(name for name, field in model.model_fields.items() if not _holds_any(field.annotation))


def _holds_any(annotation: Any) -> bool:
    return annotation is Any or any(_holds_any(argument) for argument in get_args(annotation))


def contract_gap(event: Any) -> str | None:
    if not valid_timestamp(event.ts):
        return f"ts {event.ts!r} is not a valid RFC 3339 date-time"
    return _explicit_null(event, "")


_DAYS_IN_MONTH = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def valid_timestamp(ts: str) -> bool:
    """`format: date-time` for a string that already matches the contract's timestamp pattern.

    As ajv-formats checks it: a real calendar date, hours to 23, minutes and seconds to 59,
    and a leap second (`:60`) only at 23:59 UTC.
    """
    if not _valid_date(ts[:10]):
        return False
    hours, minutes, seconds = ts[11:13], ts[14:16], ts[17:19]
    if hours <= "23" and minutes <= "59" and seconds <= "59":
        return True
    return hours == "23" and minutes == "59" and seconds == "60"


def _valid_date(date: str) -> bool:
    year, month, day = int(date[0:4]), int(date[5:7]), int(date[8:10])
    if not 1 <= month <= 12:
        return False
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    days = 29 if month == 2 and leap else _DAYS_IN_MONTH[month - 1]
    return 1 <= day <= days


def _explicit_null(model: BaseModel, prefix: str) -> str | None:
    rule = _null_rules().get(type(model))
    if rule is None:
        return None
    given = model.model_fields_set
    for name in rule.not_nullable:
        if name in given and getattr(model, name) is None:
            return f"{prefix}{name} may be absent but not null"
    for name in rule.nested:
        value = getattr(model, name)
        if isinstance(value, BaseModel):
            problem = _explicit_null(value, f"{prefix}{name}.")
            if problem is not None:
                return problem
    return None


@cache
def _null_rules() -> dict[type[BaseModel], NullRule]:
    """The optional fields the schema forbids to be null, by model (generated from the schema);
    an unknown event is checked by the envelope's rule. Built on the first line the slow path
    checks: the models cost ~150 ms to import, which a reader of valid lines never pays."""
    from trainwire._generated import events as generated_events
    from trainwire.contract.models import Envelope, UnknownEvent

    def model_named(title: str) -> type[BaseModel]:
        model: type[BaseModel] = UnknownEvent if title == Envelope.__name__ else getattr(generated_events, title)
        return model

    return {model_named(title): rule for title, rule in NULL_RULES.items()}
