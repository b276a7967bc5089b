"""The facts of the contract that hand-written code needs, derived once from the bundles.

`gen_contract` renders them into a Python and a TypeScript module, so a schema change
reaches the writer, the readers and `validate` through `make generate` and nothing is
copied by hand: the patterns of a run id, an event name and a relative path, the envelope
fields, the schema families, the events (names, schema titles and families, in the order of
the `Line` union), the message length limit, the fields that may be absent but not null,
and the diagnostic and rule codes with their meaning (from `CODES`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import bundle
import event_schemas
from _common import ROOT

#: the one table of every code a reader or `trainwire validate` reports
CODES = ROOT / "conformance" / "codes.json"
#: the one table of the exit code of each run status (and `tail`'s "not finished")
EXIT_CODES = ROOT / "conformance" / "exit-codes.json"


def _def_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _pattern(schema: dict[str, Any]) -> str:
    """A schema pattern as the code matches it: whole-string (`fullmatch`), anchors dropped."""
    pattern = schema["pattern"]
    if not (pattern.startswith("^") and pattern.endswith("$")):
        raise SystemExit(f"pattern {pattern!r} is not anchored at both ends")
    return pattern[1:-1]


def _message_limit(defs: dict[str, Any]) -> int:
    """The one length limit of the free texts a writer clips (`error.message`, stop reasons)."""
    limits = {
        "ErrorInfo.message": defs["ErrorInfo"]["properties"]["message"]["maxLength"],
        "StopRequested.reason": defs["StopRequested"]["properties"]["reason"]["maxLength"],
        "StopRequested.requested_by": defs["StopRequested"]["properties"]["requested_by"]["maxLength"],
    }
    if len(set(limits.values())) != 1:
        raise SystemExit(f"the clipped texts must share one maxLength, got {limits}")
    return next(iter(limits.values()))


class _NullRules:
    """Which optional fields of which object may be absent but not null.

    Pydantic types an optional field `X | None = None` and so takes an explicit `null`
    that the schema refuses; the Python reader checks these fields itself.
    """

    def __init__(self, defs: dict[str, Any]) -> None:
        self.defs = defs
        self.objects: dict[str, dict[str, Any]] = {}  # title -> object schema (shared and inline)
        self.rules: dict[str, dict[str, Any]] = {}

    def deref(self, node: Any) -> Any:
        while isinstance(node, dict) and "$ref" in node:
            node = self.defs[_def_name(node["$ref"])]
        return node

    def allows_null(self, node: Any) -> bool:
        if not isinstance(node, dict):
            return node is not False
        if "$ref" in node and not self.allows_null(self.defs[_def_name(node["$ref"])]):
            return False
        kinds = node.get("type")
        if kinds is not None and "null" not in (kinds if isinstance(kinds, list) else [kinds]):
            return False
        if "const" in node and node["const"] is not None:
            return False
        if "enum" in node and None not in node["enum"]:
            return False
        for key in ("anyOf", "oneOf"):
            if key in node and not any(self.allows_null(branch) for branch in node[key]):
                return False
        return all(self.allows_null(part) for part in node.get("allOf", []))

    def properties(self, node: dict[str, Any]) -> tuple[dict[str, Any], set[str]]:
        """Declared properties and required names, through `allOf` parents."""
        found: dict[str, Any] = {}
        required: set[str] = set()
        for part in node.get("allOf", []):
            parent_props, parent_required = self.properties(self.deref(part))
            found.update(parent_props)
            required |= parent_required
        found.update(node.get("properties", {}))
        return found, required | set(node.get("required", ()))

    def object_titles(self, prop: dict[str, Any]) -> list[str]:
        """The objects a property holds directly: `Model` or `Model | null`."""
        titles = []
        for branch in [prop, *prop.get("anyOf", []), *prop.get("oneOf", [])]:
            target = self.deref(branch) if "$ref" in branch else branch
            if (
                isinstance(target, dict)
                and target.get("type") == "object"
                and "title" in target
                and (target.get("properties") or target.get("allOf"))
            ):
                self.objects.setdefault(target["title"], target)
                titles.append(target["title"])
        return titles

    def walk(self, title: str, schema: dict[str, Any]) -> None:
        if title in self.rules:
            return
        self.rules[title] = {}  # guards against cycles while walking
        props, required = self.properties(schema)
        not_nullable = [name for name, prop in props.items() if name not in required and not self.allows_null(prop)]
        nested: dict[str, str] = {}
        for name, prop in props.items():
            for child in self.object_titles(prop):
                self.walk(child, self.objects[child])
                if self.rules[child]:
                    nested[name] = child
        self.rules[title] = {key: value for key, value in (("not_nullable", not_nullable), ("nested", nested)) if value}

    def derive(self, roots: list[str]) -> dict[str, dict[str, Any]]:
        for title in roots:
            self.walk(title, self.defs[title])
        return {title: rule for title, rule in sorted(self.rules.items()) if rule}


def _events(defs: dict[str, Any], titles: list[str]) -> dict[str, str]:
    """Event name -> the title of its schema, in the order of the `Line` union."""
    events = {defs[title]["properties"]["event"]["const"]: title for title in titles}
    if len(events) != len(titles):
        raise SystemExit(f"two events of {titles} share a name")
    return events


def _families(names: list[str]) -> dict[str, list[str]]:
    """Family (the name before its first dot: `run`, `train`, ...) -> its event names."""
    families: dict[str, list[str]] = {}
    for name in names:
        families.setdefault(name.split(".", 1)[0], []).append(name)
    return families


def _codes(reader_state: dict[str, Any]) -> dict[str, Any]:
    table = json.loads(CODES.read_text(encoding="utf-8"))
    declared = reader_state["$defs"]["Diagnostic"]["properties"]["code"]["enum"]
    diagnostics = [entry["code"] for entry in table["codes"] if "reader" in entry["reported_by"]]
    if diagnostics != declared:
        raise SystemExit(
            f"{CODES.relative_to(ROOT)}: the reader codes {diagnostics} differ from the Diagnostic schema's {declared}"
        )
    return table


def _exit_codes(run_finished: dict[str, Any]) -> dict[str, Any]:
    table = json.loads(EXIT_CODES.read_text(encoding="utf-8"))
    status = run_finished["properties"]["status"]
    declared, listed = status["enum"], [entry["status"] for entry in table["statuses"]]
    if listed != declared:
        raise SystemExit(
            f"{EXIT_CODES.relative_to(ROOT)}: the statuses {listed} differ from the RunFinished schema's {declared}"
        )
    # the schema's own text states the codes too: it must say what the table says
    if f"Exit codes: {exit_codes_text(table)}." not in status["description"]:
        raise SystemExit(f"RunFinished.status: the description must state `Exit codes: {exit_codes_text(table)}.`")
    return table


def exit_codes_text(exit_codes: dict[str, Any]) -> str:
    """The codes as a sentence lists them: `succeeded 0, failed 1, ...`."""
    return ", ".join(f"{entry['status']} {entry['exit_code']}" for entry in exit_codes["statuses"])


def tail_exit_codes_text(exit_codes: dict[str, Any]) -> str:
    """`exit_codes_text` and the code `trainwire tail` adds for a run that has not finished."""
    extra = exit_codes["not_finished"]
    return f"{exit_codes_text(exit_codes)}, {extra['label']} {extra['exit_code']}"


def derive(bundles: Path) -> dict[str, Any]:
    line = json.loads((bundles / "trainwire-v1.schema.json").read_text(encoding="utf-8"))
    reader_state = json.loads((bundles / "reader-state-v1.schema.json").read_text(encoding="utf-8"))
    defs = line["$defs"]
    envelope = defs["Envelope"]
    events = [_def_name(ref["$ref"]) for ref in line["oneOf"]]
    titles = _events(defs, events)
    return {
        "events": titles,
        "event_families": _families(list(titles)),
        "schema_families": list(bundle.FAMILIES),
        "envelope_fields": list(envelope["properties"]),
        "run_id_pattern": _pattern(defs["RunId"]),
        "event_name_pattern": _pattern(envelope["properties"]["event"]),
        "relative_path_pattern": _pattern(defs["RelativePath"]),
        "message_limit": _message_limit(defs),
        "null_rules": _NullRules(defs).derive(["Envelope", *events]),
        "codes": _codes(reader_state)["codes"],
        "exit_codes": _exit_codes(defs["RunFinished"]),
        "view_events": [name for name, view in event_schemas.annotation("x-trainwire-view-event").items() if view],
        "step_roles": event_schemas.annotation("x-trainwire-step-role"),
        "scalars": {
            name: scalars for name, scalars in event_schemas.annotation("x-trainwire-scalars").items() if scalars
        },
        "tracker_events": [
            name for name, tracked in event_schemas.annotation("x-trainwire-tracker-event").items() if tracked
        ],
    }
