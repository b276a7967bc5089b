"""Generate the core schema of the journal snapshot's validator from `schemas/series/`.

A snapshot (`series.json`) is read from a file anyone may have written, by the server
(Python) and, as the opening's `series`, by the page (TypeScript, ajv's standalone code of
the same bundle). Both must take exactly what the JSON Schema takes, so this translates the
bundle keyword by keyword into a pydantic-core schema the package runs over the bytes, with
JSON's meaning where pydantic's differs: an integer is any spelling of an integer value
(`1.0` is 1, as a JavaScript reader cannot tell them apart; `true` and `"1"` are not), a
number is finite (an overflowing literal is refused, as ajv refuses infinity), and a tuple
comes out as the list it was. Only the keywords the series schemas use are translated; any
other stops generation, so the two validators cannot drift apart silently.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from _common import ROOT, dump_json

FAMILY = "series-v1"
OUTPUT = Path("python/src/trainwire/_generated/series-snapshot.core-schema.json")

_ANNOTATIONS = frozenset({"title", "description", "$comment", "examples"})
_FLOAT: dict[str, Any] = {"type": "float", "strict": True, "allow_inf_nan": False}
#: the largest integer a double rounds to a finite value: past it, JSON.parse gives infinity
_LARGEST_FINITE = 2**1024 - 2**970 - 1
#: a number as JSON spelled it (an integer stays an int), finite as a double
_NUMBER: dict[str, Any] = {
    "type": "union",
    "mode": "left_to_right",
    "choices": [{"type": "int", "strict": True, "ge": -_LARGEST_FINITE, "le": _LARGEST_FINITE}, _FLOAT],
}


class _Translation:
    def __init__(self, bundle: dict[str, Any]) -> None:
        self.defs: dict[str, Any] = bundle["$defs"]
        self.used: dict[str, dict[str, Any]] = {}  # each definition translated once, referred to by name

    def schema(self, node: dict[str, Any]) -> dict[str, Any]:
        unknown = set(node) - _ANNOTATIONS - _TRANSLATED
        if unknown:
            raise SystemExit(f"{FAMILY}: no translation for {sorted(unknown)} in {node!r}: extend {__file__}")
        if "$ref" in node:
            name = node["$ref"].removeprefix("#/$defs/")
            if name not in self.used:
                self.used[name] = {}  # reserved first: a definition may refer to itself
                self.used[name] = {**self.schema(self.defs[name]), "ref": name}
            return {"type": "definition-ref", "schema_ref": name}
        if "const" in node:
            return self._literal([node["const"]])
        if "enum" in node:
            return self._literal(node["enum"])
        types = node["type"] if isinstance(node["type"], list) else [node["type"]]
        choices = [self._typed(kind, node) for kind in types if kind != "null"]
        value = choices[0] if len(choices) == 1 else {"type": "union", "choices": choices}
        return {"type": "nullable", "schema": value} if "null" in types else value

    def _literal(self, values: list[Any]) -> dict[str, Any]:
        literal = {"type": "literal", "expected": values}
        if all(type(value) is int for value in values):  # 2.0 is the constant 2; true is not
            return {"type": "chain", "steps": [_integer({}), literal]}
        if not all(type(value) is str for value in values):
            raise SystemExit(f"{FAMILY}: only integer or string constants are translated, got {values!r}")
        return literal

    def _typed(self, kind: str, node: dict[str, Any]) -> dict[str, Any]:
        if kind == "integer":
            return _integer(node)
        if kind == "number":
            return _NUMBER
        if kind == "string":
            return {"type": "str", "strict": True}
        if kind == "object":
            return self._object(node)
        if kind == "array":
            return self._array(node)
        raise SystemExit(f"{FAMILY}: no translation for type {kind!r}")

    def _object(self, node: dict[str, Any]) -> dict[str, Any]:
        extra = node.get("additionalProperties", True)
        if "properties" not in node:
            values = {"type": "any"} if extra is True else self.schema(extra)
            return {"type": "dict", "keys_schema": {"type": "str"}, "values_schema": values, "strict": True}
        if extra is not True:
            raise SystemExit(f"{FAMILY}: an object with properties stays open: {node!r}")
        required = set(node.get("required", ()))
        fields = {
            name: {"type": "typed-dict-field", "schema": self.schema(sub), "required": name in required}
            for name, sub in node["properties"].items()
        }
        return {"type": "typed-dict", "fields": fields, "extra_behavior": "allow", "strict": True}

    def _array(self, node: dict[str, Any]) -> dict[str, Any]:
        if "prefixItems" not in node:
            array = {"type": "list", "items_schema": self.schema(node.get("items", {"type": "any"})), "strict": True}
            return array | ({"max_length": node["maxItems"]} if "maxItems" in node else {})
        prefix = node["prefixItems"]
        if node.get("items") is not False or node.get("minItems") != len(prefix) or "maxItems" in node:
            raise SystemExit(f"{FAMILY}: only exact tuples (`items: false`, `minItems` of all) are translated")
        # a strict tuple, then back to the list JSON has (lax: a tuple becomes a list, its items kept)
        exact = {"type": "tuple", "items_schema": [self.schema(item) for item in prefix], "strict": True}
        return {"type": "chain", "steps": [exact, {"type": "list", "items_schema": {"type": "any"}, "strict": False}]}


_TRANSLATED = frozenset(
    {"$ref", "const", "enum", "type", "properties", "required", "additionalProperties", "items", "prefixItems"}
    | {"minItems", "maxItems", "minimum", "maximum"}
)


def _integer(node: dict[str, Any]) -> dict[str, Any]:
    """A number with no fraction, as an int: a float first (no `true`, no text), then its value."""
    bounds = {key: node[name] for key, name in (("ge", "minimum"), ("le", "maximum")) if name in node}
    return {"type": "chain", "steps": [{**_FLOAT, "multiple_of": 1}, {"type": "int", "strict": False, **bounds}]}


def core_schema(bundles: Path) -> dict[str, Any]:
    bundle = json.loads((bundles / f"{FAMILY}.schema.json").read_text(encoding="utf-8"))
    root = {key: value for key, value in bundle.items() if key not in ("$defs", "$schema", "$id")}
    translation = _Translation(bundle)
    schema = translation.schema(root)
    return {"type": "definitions", "schema": schema, "definitions": list(translation.used.values())}


def generate(out_root: Path, bundles: Path) -> None:
    (out_root / OUTPUT).write_text(
        dump_json({"schema": core_schema(bundles), "config": {"strict": True}}), encoding="utf-8"
    )


if __name__ == "__main__":
    generate(ROOT, ROOT / "schemas" / "bundled")
