"""Backward-compatibility gate: compare the v1 contract with the last released snapshot.

Rules (a MINOR revision only adds): no event or field is removed, no type changes, no enum value
is removed, no optional field becomes required, no new required field; a new field is
optional and described. Both sides are compared as bundles, so a change inside a shared
definition is caught at every place that uses it.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass

import bundle
from _common import SCHEMAS

RELEASED = SCHEMAS / "released" / "trainwire-v1.schema.json"
#: the reader state of the released contract: a state its readers write must stay valid
RELEASED_READER_STATE = SCHEMAS / "released" / "reader-state-v1.schema.json"


@dataclass(frozen=True)
class Violation:
    rule: str
    path: str
    detail: str

    def __str__(self) -> str:
        return f"{self.rule} at {self.path}: {self.detail}"


def _resolve(schema: dict, defs: dict) -> dict:
    seen = 0
    while "$ref" in schema and seen < 32:
        extra = {k: v for k, v in schema.items() if k != "$ref"}
        schema = {**defs[schema["$ref"].rsplit("/", 1)[-1]], **extra}
        seen += 1
    return schema


def _types(schema: dict) -> frozenset[str]:
    """The JSON types a schema admits. `integer` beside `number` admits no other value (an
    integer is an integer-valued number): listing it only tells the code generators to keep
    integers as integers, so it is no change of type."""
    kind = schema.get("type")
    if kind is None:
        return frozenset()
    kinds = frozenset(kind if isinstance(kind, list) else [kind])
    return kinds - {"integer"} if "number" in kinds else kinds


def _events(bundle_schema: dict) -> dict[str, dict]:
    defs = bundle_schema["$defs"]
    out = {}
    for ref in bundle_schema["oneOf"]:
        event = _resolve(ref, defs)
        out[event["properties"]["event"]["const"]] = event
    return out


def _walker(old_defs: dict, new_defs: dict, found: list[Violation]):  # noqa: ANN202 (a closure over the bundles)
    """A walk of one schema of the old bundle beside the same schema of the new one, adding to `found`."""

    def walk(a: dict, b: dict, path: str) -> None:
        a, b = _resolve(a, old_defs), _resolve(b, new_defs)
        if _types(a) != _types(b) and _types(a):
            found.append(Violation("type-changed", path, f"{sorted(_types(a))} -> {sorted(_types(b))}"))
        if "const" in a and a.get("const") != b.get("const"):
            found.append(Violation("type-changed", path, f"const {a['const']!r} -> {b.get('const')!r}"))
        if "enum" in a:
            removed = [v for v in a["enum"] if v not in b.get("enum", [])]
            if removed:
                found.append(Violation("enum-value-removed", path, f"removed {removed}"))
        a_props, b_props = a.get("properties", {}), b.get("properties", {})
        a_req, b_req = set(a.get("required", ())), set(b.get("required", ()))
        for name in a_props:
            if name not in b_props:
                found.append(Violation("field-removed", f"{path}/properties/{name}", "the field no longer exists"))
            else:
                if name in b_req and name not in a_req:
                    found.append(
                        Violation(
                            "optional-made-required", f"{path}/properties/{name}", "an optional field became required"
                        )
                    )
                walk(a_props[name], b_props[name], f"{path}/properties/{name}")
        for name in b_props:
            if name in a_props:
                continue
            if name in b_req:
                found.append(
                    Violation("new-required-field", f"{path}/properties/{name}", "a new field must be optional")
                )
            if not _resolve(b_props[name], new_defs).get("description") and not b_props[name].get("description"):
                found.append(
                    Violation("undescribed-new-field", f"{path}/properties/{name}", "a new field needs a description")
                )
        for key in ("items", "additionalProperties"):
            if isinstance(a.get(key), dict) and isinstance(b.get(key), dict):
                walk(a[key], b[key], f"{path}/{key}")
        for key in ("anyOf", "oneOf"):
            if key in a and key in b and len(a[key]) == len(b[key]):
                for index, (x, y) in enumerate(zip(a[key], b[key], strict=False)):
                    walk(x, y, f"{path}/{key}/{index}")
            elif key in a and key in b and len(b[key]) < len(a[key]):
                found.append(Violation("type-changed", f"{path}/{key}", "fewer alternatives than before"))
        for index, (x, y) in enumerate(zip(a.get("allOf", ()), b.get("allOf", ()), strict=False)):
            walk(x, y, f"{path}/allOf/{index}")

    return walk


def compare(old: dict, new: dict) -> list[Violation]:
    """Every rule the new bundle breaks against the old one."""
    found: list[Violation] = []
    walk = _walker(old["$defs"], new["$defs"], found)
    old_events, new_events = _events(old), _events(new)
    for name, event in old_events.items():
        if name not in new_events:
            found.append(Violation("event-removed", f"/events/{name}", "the event no longer exists"))
        else:
            walk(event, new_events[name], f"/events/{name}")
    for name, event in new_events.items():
        if name not in old_events and not event.get("description"):
            found.append(Violation("undescribed-new-field", f"/events/{name}", "a new event needs a description"))
    return found


def compare_reader_state(old: dict, new: dict) -> list[Violation]:
    """Every rule the new reader-state bundle breaks against the old one: the same rules, so
    that a state a reader of the released contract writes is still a valid state."""
    found: list[Violation] = []
    _walker(old["$defs"], new["$defs"], found)(old, new, "/reader-state")
    return found


def check_against_release(current: dict | None = None) -> list[str]:
    released = json.loads(RELEASED.read_text(encoding="utf-8"))
    current = current or bundle.bundle(bundle.FAMILIES["trainwire-v1"], "trainwire-v1")
    released_state = json.loads(RELEASED_READER_STATE.read_text(encoding="utf-8"))
    current_state = bundle.bundle(bundle.FAMILIES["reader-state-v1"], "reader-state-v1")
    return [f"compatibility: {v}" for v in compare(released, current)] + [
        f"reader-state compatibility: {v}" for v in compare_reader_state(released_state, current_state)
    ]


if __name__ == "__main__":
    problems = check_against_release()
    print("\n".join(problems) or "compatible with the last release")
    sys.exit(1 if problems else 0)
