"""The journal is one package: no module of `contract/`, `lines/` or `reader/` is named for
the journal, its kept steps, its snapshot or its opening unless it is a door (it defines
nothing, only hands on names of `trainwire.journal`)."""

from __future__ import annotations

import ast
import re

from support.paths import SOURCES

#: a module named for what the journal holds
JOURNAL_NAMES = re.compile(r"journal|kept_step|snapshot|opening|notes|completeness")


def _is_door(source: str) -> bool:
    """Only imports from `trainwire.journal` and an `__all__`: nothing defined."""
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):  # the docstring
            continue
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("trainwire.journal"):
            continue
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["__all__"]:
            continue
        return False
    return True


def test_no_module_named_for_the_journal_lives_below_or_beside_it_but_a_door() -> None:
    found = [
        f"{path.relative_to(SOURCES)}"
        for package in ("contract", "lines", "reader")
        for path in sorted((SOURCES / package).glob("*.py"))
        if JOURNAL_NAMES.search(path.stem) and not _is_door(path.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_the_documented_door_hands_on_the_journals_own_names() -> None:
    from trainwire.journal import kept_steps
    from trainwire.reader import kept_steps as door

    assert door.KeptStepsMerge is kept_steps.KeptStepsMerge
    assert door.every_line is kept_steps.every_line
    assert sorted(door.__all__) == sorted(name for name in kept_steps.__all__ if name != "LineReader")


def test_the_opening_door_hands_on_the_journals_own_names() -> None:
    from trainwire.journal import opening
    from trainwire.reader import run_opening as door

    assert door.open_from_snapshots is opening.open_from_snapshots
    assert sorted(door.__all__) == sorted(opening.__all__)
