"""`make check` catches hand edits of generated files and invalid schemas."""

from __future__ import annotations

import json
from pathlib import Path

import check
import pytest


def _append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)


def test_hand_edits_of_generated_files_are_each_named(generated_copy: Path) -> None:
    assert check.drifted_files(generated_copy) == []
    python_file = "python/src/trainwire/_generated/events.py"
    docs_file = "docs/reference/events.md"
    ts_file = next(
        str(p.relative_to(generated_copy))
        for p in sorted((generated_copy / "typescript/src/generated").rglob("*"))
        if p.is_file()
    )
    for rel in (python_file, docs_file, ts_file):
        _append(generated_copy / rel, "\n# edited by hand\n")
    (generated_copy / "schemas/bundled/stray.schema.json").write_text("{}\n")
    problems = check.drifted_files(generated_copy)
    for rel in (python_file, docs_file, ts_file):
        assert any(p.startswith(f"{rel}: differs") for p in problems), (rel, problems)
    assert any(p.startswith("schemas/bundled/stray.schema.json: not produced") for p in problems)


def test_an_invalid_schema_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    schemas = tmp_path / "schemas"
    schemas.mkdir()
    (schemas / "bad.schema.json").write_text(json.dumps({"type": "no-such-type"}))
    monkeypatch.setattr(check, "SCHEMAS", schemas)
    monkeypatch.setattr(check, "ROOT", tmp_path)
    (problem,) = check.invalid_schemas()
    assert problem.startswith("schemas/bad.schema.json: not a valid 2020-12 schema at /type")


def test_the_committed_tree_is_in_sync() -> None:
    assert check.invalid_schemas() == []
    assert check.drifted_files() == []
