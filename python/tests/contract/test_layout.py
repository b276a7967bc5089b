"""Which stream a run path names: one resolver (`stream_path`) for every command and module."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from support.paths import SOURCES

from trainwire.cli.tail import stream_files
from trainwire.contract.layout import STREAM_FILE, stream_path


def test_a_run_directory_names_its_stream(tmp_path: Path) -> None:
    assert stream_path(tmp_path) == tmp_path / STREAM_FILE
    assert stream_path(str(tmp_path)) == tmp_path / STREAM_FILE


def test_a_file_names_itself_whatever_its_name(tmp_path: Path) -> None:
    (tmp_path / "log").write_bytes(b"")
    assert stream_path(tmp_path / "log") == tmp_path / "log"
    assert stream_path(tmp_path / "missing.jsonl") == tmp_path / "missing.jsonl"


def test_a_missing_path_without_a_suffix_is_a_run_directory_to_come(tmp_path: Path) -> None:
    assert stream_path(tmp_path / "out") == tmp_path / "out" / STREAM_FILE


def test_tail_reads_every_run_of_a_directory_of_runs_but_its_own_stream_first(tmp_path: Path) -> None:
    for run in ("b", "a"):
        (tmp_path / run).mkdir()
        (tmp_path / run / STREAM_FILE).write_bytes(b"")
    (tmp_path / "c.jsonl").write_bytes(b"")
    assert stream_files(tmp_path) == [tmp_path / "a" / STREAM_FILE, tmp_path / "b" / STREAM_FILE, tmp_path / "c.jsonl"]
    (tmp_path / STREAM_FILE).write_bytes(b"")
    assert stream_files(tmp_path) == [tmp_path / STREAM_FILE]


def test_tail_waits_for_the_stream_of_an_empty_directory(tmp_path: Path) -> None:
    assert stream_files(tmp_path) == [tmp_path / STREAM_FILE]


def _literals(tree: ast.AST) -> list[tuple[int, str]]:
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)
    }  # fmt: skip
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


@pytest.mark.parametrize(
    "module",
    sorted(p for p in SOURCES.rglob("*.py") if "_generated" not in p.parts),
    ids=lambda p: str(p.relative_to(SOURCES)),
)
def test_the_stream_file_name_is_written_once_in_code(module: Path) -> None:
    if module == SOURCES / "contract" / "layout.py":
        return
    found = [
        (line, text) for line, text in _literals(ast.parse(module.read_text(encoding="utf-8"))) if STREAM_FILE in text
    ]
    assert found == [], f"use contract.layout.STREAM_FILE or stream_path: {found}"
