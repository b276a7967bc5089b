"""`make check` catches hand edits of generated files and invalid schemas."""

from __future__ import annotations

import json
from pathlib import Path

import check
import pytest
from _common import ROOT


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


def test_a_hand_edit_between_the_markers_of_a_doc_is_named(generated_copy: Path) -> None:
    stop = generated_copy / "docs/stop.md"
    original = stop.read_text(encoding="utf-8")
    assert "| `interrupted` | 2 |" in original
    stop.write_text(original.replace("| `interrupted` | 2 |", "| `interrupted` | 7 |"), encoding="utf-8")
    try:
        assert (
            "docs/stop.md: differs from what `make generate` writes (edited by hand, or not regenerated)"
            in check.drifted_files(generated_copy)
        )
    finally:
        stop.write_text(original, encoding="utf-8")


def test_doc_regions_are_filled_from_the_one_exit_code_table() -> None:
    import contract_facts
    import gen_doc_tables

    facts = contract_facts.derive(ROOT / "schemas" / "bundled")
    text = "code (<!-- generated: exit-codes-inline -->stale<!-- end: exit-codes-inline -->)"
    assert (
        gen_doc_tables.fill(text, facts, "x.md")
        == "code (<!-- generated: exit-codes-inline -->succeeded 0, failed 1, interrupted 2, reverted 3, awaiting_approval 4<!-- end: exit-codes-inline -->)"
    )
    with pytest.raises(SystemExit, match="unknown generated region 'exit-code'"):
        gen_doc_tables.fill("<!-- generated: exit-code --><!-- end: exit-code -->", facts, "x.md")
    with pytest.raises(SystemExit, match="no generated region"):
        gen_doc_tables.fill("no markers", facts, "x.md")


def test_a_stale_list_of_events_is_named(generated_copy: Path) -> None:
    # the lists of events are generated: the `Line` union and the event model exports
    edits = {
        "schemas/v1/line.schema.json": ('    {\n      "$ref": "events/run-heartbeat.schema.json"\n    },\n', ""),
        "python/src/trainwire/__init__.py": ('    "RunHeartbeat",\n', ""),
        "python/src/trainwire/contract/models.py": ("    RunHeartbeat,\n", ""),
    }
    originals = {rel: (generated_copy / rel).read_text(encoding="utf-8") for rel in edits}
    try:
        for rel, (old, new) in edits.items():
            assert old in originals[rel], rel
            (generated_copy / rel).write_text(originals[rel].replace(old, new, 1), encoding="utf-8")
        problems = check.drifted_files(generated_copy)
        for rel in edits:
            assert f"{rel}: differs from what `make generate` writes (edited by hand, or not regenerated)" in problems
    finally:
        for rel, text in originals.items():
            (generated_copy / rel).write_text(text, encoding="utf-8")


def test_a_broken_workflow_is_named_by_the_workflow_check(tmp_path: Path) -> None:
    assert check.workflow_breaks() == []
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    (workflows / "broken.yml").write_text(  # a job with no `runs-on`
        "on: push\njobs:\n  test:\n    steps:\n      - run: echo hi\n",
        encoding="utf-8",
    )
    problems = check.workflow_breaks(tmp_path)
    assert problems and all(line.startswith("workflows: ") for line in problems)
    assert any("broken.yml" in line and "$.jobs.test" in line for line in problems), problems
