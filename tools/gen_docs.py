"""Generate docs/reference/events.md from the v1 bundle (one table per event, then the shared
objects and value types) and docs/reference/codes.md from conformance/codes.json."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import contract_facts
from _common import ROOT, SCHEMAS

OUTPUT = Path("docs/reference/events.md")
CODES_OUTPUT = Path("docs/reference/codes.md")
ENVELOPE_FIELDS = ("schema_version", "seq", "ts", "run_id", "event", "stage")
#: objects defined inline in a property (with a title), documented with the shared ones
INLINE_OBJECTS: dict[str, dict] = {}


def _def_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _is_object(schema: dict) -> bool:
    return schema.get("type") == "object"


def _value_types(defs: dict) -> dict[str, dict]:
    """Scalar definitions with a pattern: documented once, linked from each field."""
    return {name: schema for name, schema in defs.items() if "pattern" in schema and not _is_object(schema)}


def render_type(schema: dict, defs: dict) -> str:
    """A short human form of a property's type, e.g. `integer >= 0` or `Metrics`."""
    if "$ref" in schema:
        name = _def_name(schema["$ref"])
        target = defs[name]
        if _is_object(target) or name in _value_types(defs):
            return f"[{name}](#{name.lower()})"
        return render_type({k: v for k, v in target.items() if k not in ("title", "description")}, defs)
    named = [
        name
        for name, value in _value_types(defs).items()
        if "pattern" in schema and value["pattern"] == schema["pattern"]
    ]
    if named:
        kinds = schema.get("type")
        nullable = isinstance(kinds, list) and "null" in kinds
        return f"[{named[0]}](#{named[0].lower()})" + (" or null" if nullable else "")
    if "const" in schema:
        return f"`{json.dumps(schema['const'])}`"
    if "enum" in schema:
        return " or ".join(f"`{json.dumps(v)}`" for v in schema["enum"])
    if schema.get("type") == "object" and "title" in schema and "properties" in schema:
        INLINE_OBJECTS.setdefault(schema["title"], schema)
        return f"[{schema['title']}](#{schema['title'].lower()})"
    if "anyOf" in schema:
        return " or ".join(render_type(s, defs) for s in schema["anyOf"])
    types = schema.get("type", "any")
    types = types if isinstance(types, list) else [types]
    parts = []
    for kind in types:
        text = kind
        if kind == "object" and isinstance(schema.get("additionalProperties"), dict):
            text = f"object of {render_type(schema['additionalProperties'], defs)}"
        if kind in ("integer", "number"):
            bounds = []
            if "minimum" in schema:
                bounds.append(f">= {schema['minimum']}")
            if "exclusiveMinimum" in schema:
                bounds.append(f"> {schema['exclusiveMinimum']}")
            if "maximum" in schema and schema["maximum"] != 9007199254740991:
                bounds.append(f"<= {schema['maximum']}")
            text += (" " + ", ".join(bounds)) if bounds else ""
        if kind == "string" and "maxLength" in schema:
            text += f" (at most {schema['maxLength']} characters)"
        if kind == "string" and "pattern" in schema:
            text += f" matching `{schema['pattern']}`"
        parts.append(text)
    return " or ".join(parts)


def _nullable(schema: dict, defs: dict) -> bool:
    if "$ref" in schema:
        return _nullable(defs[_def_name(schema["$ref"])], defs)
    types = schema.get("type")
    if isinstance(types, list) and "null" in types:
        return True
    if None in schema.get("enum", ()):
        return True
    return any(s.get("type") == "null" for s in schema.get("anyOf", ()))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def table(schema: dict, defs: dict, skip: tuple[str, ...] = ()) -> list[str]:
    rows = ["| field | type | required | nullable | description |", "|---|---|---|---|---|"]
    required = set(schema.get("required", ()))
    for name, prop in schema.get("properties", {}).items():
        if name in skip:
            continue
        rows.append(
            f"| `{name}` | {_cell(render_type(prop, defs))} | {'yes' if name in required else 'no'} "
            f"| {'yes' if _nullable(prop, defs) else 'no'} | {_cell(prop.get('description', ''))} |"
        )
    return rows


def render(bundle: dict) -> str:
    defs = bundle["$defs"]
    INLINE_OBJECTS.clear()
    out = [
        "# Events of schema version 1",
        "",
        "Generated from `schemas/bundled/trainwire-v1.schema.json` by `make generate`; do not edit.",
        "Every line carries the envelope; the payload fields of its event sit beside it.",
        "Payloads are open: unknown fields are kept by readers; a producer's own fields start with `x_`.",
        "",
        "## Envelope",
        "",
        defs["Envelope"]["description"],
        "",
        *table(defs["Envelope"], defs),
        "",
    ]
    for ref in bundle["oneOf"]:
        event = defs[_def_name(ref["$ref"])]
        name = event["properties"]["event"]["const"]
        out += [f"## `{name}`", "", event["description"], "", *table(event, defs, skip=ENVELOPE_FIELDS), ""]
    out += ["## Shared objects", ""]
    shared = {n: s for n, s in defs.items() if _is_object(s) and "allOf" not in s}
    shared.pop("Envelope")
    done: set[str] = set()
    while len(done) < len(shared) + len(INLINE_OBJECTS):
        for name, schema in sorted({**shared, **INLINE_OBJECTS}.items()):
            if name not in done:
                done.add(name)
                body = table(schema, defs) if "properties" in schema else [_map_line(schema, defs)]
                out += [f"### {name}", "", schema.get("description", ""), "", *body, ""]
    out += ["## Value types", ""]
    for name, schema in sorted(_value_types(defs).items()):
        bare = {k: v for k, v in schema.items() if k not in ("title", "description", "pattern")}
        out += [
            f"### {name}",
            "",
            schema["description"],
            "",
            f"{render_type(bare, defs)} matching `{schema['pattern']}`.",
            "",
        ]
    return "\n".join(out).rstrip("\n") + "\n"


def _map_line(schema: dict, defs: dict) -> str:
    """An object of free keys (`Metrics`): what its keys and values are."""
    names = schema.get("propertyNames", {})
    bounds = f" of {names.get('minLength', 0)} to {names['maxLength']} characters" if "maxLength" in names else ""
    return f"An object whose keys are strings{bounds} and whose values are {render_type(schema.get('additionalProperties', {}), defs)}."


def render_codes(codes: list[dict]) -> str:
    out = [
        "# Diagnostic and rule codes",
        "",
        "Generated from `conformance/codes.json` by `make generate`; do not edit. A reader reports",
        "the `reader` codes as diagnostics (`schemas/reader-state/v1`, `diagnostics[].code`);",
        "`trainwire validate` reports every code below as a broken rule. The code is the",
        "contract; the message beside it is free text.",
        "",
        "| code | reported by | meaning |",
        "|---|---|---|",
    ]
    out += [f"| `{c['code']}` | {', '.join(c['reported_by'])} | {_cell(c['meaning'])} |" for c in codes]
    return "\n".join(out) + "\n"


def generate(out_root: Path, bundles: Path) -> None:
    bundle = json.loads((bundles / "trainwire-v1.schema.json").read_text(encoding="utf-8"))
    target = out_root / OUTPUT
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render(bundle), encoding="utf-8")
    codes = json.loads(contract_facts.CODES.read_text(encoding="utf-8"))["codes"]
    (out_root / CODES_OUTPUT).write_text(render_codes(codes), encoding="utf-8")


if __name__ == "__main__":
    generate(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT, SCHEMAS / "bundled")
