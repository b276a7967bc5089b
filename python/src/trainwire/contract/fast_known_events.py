"""An optional faster decoder of the readers' hot path (the `fast` extra, msgspec): a fast
path only, never more permissive than `KNOWN_EVENT_DICTS`.

The msgspec structs are translated at import from the same generated core schema as the
pydantic-core validator, one struct per typed dict. A body of lines msgspec accepts gives
exactly the dicts pydantic-core gives line by line (same keys, values and types; only
the order of the keys differs: `event` comes first); anything it refuses, and anything it
could judge differently, is left to pydantic-core:

- unknown keys are refused (pydantic keeps them), so such a body falls back;
- a body with a backslash falls back: escapes are where the two parsers' strings differ
  (a lone surrogate; Python's `$` before a final newline, which Rust's does not match);
- an event whose core schema has a node the translation does not know gets no struct;
- msgspec refuses `true` or `1.0` for an integer, an overflowing literal, `NaN`.

A body is decoded in one call as `[[line 1],[line 2],...]`: with no bracket in the body,
the brackets are the separators, so each line is one element holding exactly one event.
Without msgspec, or with `TRAINWIRE_FAST=0` in the environment, there is no fast decoder.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Annotated, Any, Literal, Optional, Union

__all__ = ["FastBody", "fast_decoder"]

#: a body of lines (without the last newline) into the dicts `KNOWN_EVENT_DICTS.validate_json`
#: gives each line, or None when pydantic-core must decide
FastBody = Callable[[bytes], "list[dict[str, Any]] | None"]


class _Untranslatable(Exception):
    """A core schema node the translation does not know: its event gets no struct."""


def fast_decoder(schema: dict[str, Any]) -> FastBody | None:
    """The fast decoder of the tagged union `schema` (the known-event core schema), or None
    without msgspec, with `TRAINWIRE_FAST=0`, or when no event could be translated."""
    if os.environ.get("TRAINWIRE_FAST", "1") == "0":
        return None
    try:
        import msgspec
    except ImportError:
        return None
    structs = _Translation(msgspec).events(schema)
    if not structs:
        return None
    decode = msgspec.json.Decoder(list[tuple[Union[tuple(structs)]]]).decode  # type: ignore[misc]  # noqa: UP007
    as_builtins = msgspec.to_builtins
    # msgspec's own errors are ValueErrors, and so is invalid UTF-8 inside a string (UnicodeDecodeError)
    refused = (ValueError, RecursionError)

    def fast_body(body: bytes) -> list[dict[str, Any]] | None:
        if b"\\" in body or b"[" in body or b"]" in body:
            return None
        try:
            rows = decode(b"[[" + body.replace(b"\n", b"],[") + b"]]")
        except refused:
            return None
        return [event for (event,) in as_builtins(rows)]

    return fast_body


class _Translation:
    """Core schema nodes into msgspec types; each typed dict a struct of its own name."""

    def __init__(self, msgspec: Any) -> None:
        self.msgspec = msgspec
        self.names = 0

    def events(self, union: dict[str, Any]) -> list[Any]:
        if union.get("type") != "tagged-union" or union.get("discriminator") != "event":
            return []
        structs = []
        for tag, choice in union["choices"].items():
            try:
                struct = self.typed_dict(choice, tag=tag)
                self.msgspec.json.Decoder(struct)  # a type msgspec cannot decode raises here, not later
            except (_Untranslatable, TypeError):
                continue  # its lines go to pydantic-core
            structs.append(struct)
        return structs

    def typed_dict(self, node: dict[str, Any], *, tag: str | None = None) -> Any:
        _only(node, {"fields", "extra_behavior", "config"}, kind="typed-dict")
        if node.get("extra_behavior", "ignore") != "allow" or node.get("config", {}) != {"strict": True}:
            raise _Untranslatable("a typed dict that drops or refuses extra keys")
        fields: list[tuple[Any, ...]] = []
        for name, field in node["fields"].items():
            _only(field, {"schema", "required"}, kind="typed-dict-field")
            if tag is not None and name == "event":
                if field["schema"] != {"type": "literal", "expected": [tag]}:
                    raise _Untranslatable("an event field that is not its tag")
                continue
            value = self.type(field["schema"])
            if field.get("required", True):
                fields.append((name, value))
            else:
                fields.append((name, Union[value, self.msgspec.UnsetType], self.msgspec.UNSET))  # noqa: UP007
        self.names += 1
        return self.msgspec.defstruct(
            f"Known{self.names}",
            fields,
            kw_only=True,
            forbid_unknown_fields=True,  # pydantic keeps an extra key: such a line falls back
            tag_field="event" if tag is not None else None,
            tag=tag,
            gc=False,  # decoded JSON holds no cycle: the collector need not track it
        )

    def type(self, node: dict[str, Any]) -> Any:  # noqa: PLR0911 (one answer per node type)
        kind = node.get("type")
        if kind == "any":
            _only(node, set(), kind=kind)
            return Any
        if kind == "bool":
            _only(node, set(), kind=kind)
            return bool
        if kind == "int":
            _only(node, {"ge", "le", "strict"}, kind=kind)
            return self.constrained(int, node, ("ge", "le"))
        if kind == "float":
            _only(node, {"ge", "gt", "le", "allow_inf_nan"}, kind=kind)
            if node.get("allow_inf_nan", True):
                raise _Untranslatable("a float that allows NaN and infinity")
            return self.constrained(float, node, ("ge", "gt", "le"))
        if kind == "str":
            _only(node, {"min_length", "max_length", "pattern"}, kind=kind)
            if "pattern" in node:
                node = {**node, "pattern": _end_anchored(node["pattern"])}
            return self.constrained(str, node, ("min_length", "max_length", "pattern"))
        if kind == "literal":
            _only(node, {"expected"}, kind=kind)
            return _literal(node["expected"])
        if kind == "chain":
            return _integer_literal(node)
        if kind == "nullable":
            _only(node, {"schema"}, kind=kind)
            return Optional[self.type(node["schema"])]  # noqa: UP045
        if kind == "list":
            _only(node, {"items_schema", "max_length"}, kind=kind)
            items = self.type(node["items_schema"]) if "items_schema" in node else Any
            return self.constrained(list[items], node, ("max_length",))  # type: ignore[valid-type]
        if kind == "dict":
            _only(node, {"keys_schema", "values_schema"}, kind=kind)
            keys = self.type(node.get("keys_schema", {"type": "str"}))
            values = self.type(node["values_schema"]) if "values_schema" in node else Any
            return dict[keys, values]  # type: ignore[valid-type]
        if kind == "union":
            _only(node, {"choices"}, kind=kind)
            if not all(isinstance(choice, dict) and choice.get("type") in _SCALARS for choice in node["choices"]):
                raise _Untranslatable("a union of other than plain scalars")
            return Union[tuple(self.type(choice) for choice in node["choices"])]  # noqa: UP007
        if kind == "typed-dict":
            return self.typed_dict(node)
        raise _Untranslatable(f"a {kind!r} node")

    def constrained(self, base: Any, node: dict[str, Any], keys: tuple[str, ...]) -> Any:
        meta = {key: node[key] for key in keys if key in node}
        return Annotated[base, self.msgspec.Meta(**meta)] if meta else base


#: one JSON kind each, none constrained: msgspec picks the choice pydantic's smart union picks
_SCALARS = frozenset({"int", "float", "str", "bool"})


def _only(node: dict[str, Any], keys: set[str], *, kind: str) -> None:
    unknown = set(node) - keys - {"type"}
    if unknown:
        raise _Untranslatable(f"{kind} with {sorted(unknown)}")


def _literal(expected: list[Any]) -> Any:
    if not expected or not all(isinstance(value, str) or type(value) is int for value in expected):
        raise _Untranslatable("a literal of other than strings and integers")
    return Literal[tuple(expected)]


def _integer_literal(node: dict[str, Any]) -> Any:
    """`chain(int strict, literal)`: an integer constant, which msgspec's `Literal` holds as
    strictly (no `true`, no `1.0`)."""
    steps = node.get("steps", [])
    if set(node) != {"type", "steps"} or len(steps) != 2 or steps[0] != {"type": "int", "strict": True}:
        raise _Untranslatable("a chain other than an integer constant")
    if steps[1].get("type") != "literal" or not all(type(value) is int for value in steps[1]["expected"]):
        raise _Untranslatable("a chain other than an integer constant")
    return _literal(steps[1]["expected"])


def _end_anchored(pattern: str) -> str:
    """The pattern with a final `$` as `\\Z`: Python's `$` also matches before a final newline."""
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + "\\Z"
    try:
        re.compile(pattern)
    except re.error:
        raise _Untranslatable("a pattern Python's re reads otherwise") from None
    return pattern
