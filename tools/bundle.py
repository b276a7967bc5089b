"""Bundle a schema family into one file whose references all point into `$defs`.

Every tool we feed (datamodel-code-generator, jsonschema, ajv, hypothesis-jsonschema)
accepts this form; not all of them resolve references across files.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from urllib.parse import urldefrag, urljoin

import event_schemas
from _common import SCHEMAS, dump_json

BUNDLE_BASE = "https://trainwire.dev/schemas/bundled/"

# family name -> the root schema that becomes the bundle's top level
FAMILIES = {
    "trainwire-v1": "v1/line.schema.json",
    "reader-state-v1": "reader-state/v1/state.schema.json",
    "harness-v1": "harness/v1/message.schema.json",
    "summary-v1": "summary/v1/summary.schema.json",
    "verdict-v1": "verdict/v1/verdict.schema.json",
    "series-v1": "series/v1/snapshot.schema.json",
}


def _load_all() -> dict[str, tuple[Path, dict]]:
    """Every hand-written schema by its `$id`."""
    by_id: dict[str, tuple[Path, dict]] = {}
    for path in sorted(SCHEMAS.rglob("*.schema.json")):
        if "bundled" in path.parts or "released" in path.parts:
            continue
        schema = json.loads(path.read_text(encoding="utf-8"))
        by_id[schema["$id"]] = (path, schema)
    return by_id


def bundle(root_rel: str, name: str) -> dict:
    by_id = _load_all()
    root_path = SCHEMAS / root_rel
    # the union over lines is written from the events folder: bundle that, not a stale file
    is_line = root_path == event_schemas.LINE_SCHEMA
    root = event_schemas.line_schema() if is_line else json.loads(root_path.read_text(encoding="utf-8"))
    defs: dict[str, dict] = {}
    def_name_of: dict[str, str] = {}

    def def_name(schema_id: str) -> str:
        if schema_id not in def_name_of:
            _, schema = by_id[schema_id]
            title = schema["title"]
            if title in def_name_of.values():
                raise SystemExit(f"two schemas are titled {title!r}: titles name the bundle's $defs")
            def_name_of[schema_id] = title
            defs[title] = {}  # reserve before recursing (cycles)
            defs[title] = rewrite(schema, schema_id, top=True)
        return def_name_of[schema_id]

    def rewrite(node, base: str, top: bool = False):
        if isinstance(node, list):
            return [rewrite(item, base) for item in node]
        if not isinstance(node, dict):
            return node
        out = {}
        for key, value in node.items():
            # annotations (`x-trainwire-*`) are for our generators, wherever they stand; no validator reads them
            if (top and key in ("$schema", "$id", "$comment")) or key.startswith(event_schemas.ANNOTATION):
                continue
            if key == "$ref":
                target, fragment = urldefrag(urljoin(base, value))
                if fragment:
                    raise SystemExit(f"{base}: only whole-file $refs are bundled, got {value!r}")
                if target not in by_id:
                    raise SystemExit(f"{base}: $ref {value!r} names no schema")
                out[key] = f"#/$defs/{def_name(target)}"
            else:
                out[key] = rewrite(value, base)
        return out

    body = rewrite(root, root["$id"], top=True)
    result = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"{BUNDLE_BASE}{name}.schema.json",
    }
    result.update(body)
    result["$defs"] = dict(sorted(defs.items()))
    return result


def main(out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, root in FAMILIES.items():
        (out_dir / f"{name}.schema.json").write_text(dump_json(bundle(root, name)), encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else SCHEMAS / "bundled")
