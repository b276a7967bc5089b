"""Every Python example in docs/python.md runs, in order, in one scratch directory and one namespace."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "python.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def test_the_guide_has_examples() -> None:
    assert len(BLOCKS) >= 5


def test_examples_run_and_print_what_their_comments_say(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__doc_example__"}  # one session, like a reader following along
    for block in BLOCKS:
        exec(compile(block, str(DOC), "exec"), namespace)
        printed = capsys.readouterr().out.splitlines()
        promised = [c.strip() for c in re.findall(r"print\(.*\)\s*#\s*(.*)", block)]
        for line, comment in zip(printed, promised):
            expected = comment.replace("...", "")
            assert line.startswith(expected), (line, comment)
    assert (tmp_path / "out" / ".trainwire-stop").exists()
