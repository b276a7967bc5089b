"""A run path that is not there is said before anything is made: no tracking store, log
directory, cursor or output file is left behind in the working directory (real processes)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli_process import trainwire

COMMANDS = [
    ("export", "mlflow", "nosuch"),
    ("export", "tensorboard", "nosuch", "--logdir", "tb"),
    ("export", "wandb", "nosuch"),
    ("tail", "nosuch"),
    ("state", "nosuch"),
    ("validate", "nosuch"),
    ("plot", "nosuch", "--out", "plot.html"),
    ("runs", "nosuch"),
    ("diff", "nosuch", "nosuch-too"),
    ("note", "nosuch", "a note"),
    ("journal", "rebuild", "nosuch"),
]


@pytest.mark.parametrize("arguments", COMMANDS, ids=lambda arguments: " ".join(arguments[:2]))
def test_a_wrong_run_path_is_said_and_nothing_is_made(arguments: tuple[str, ...], tmp_path: Path) -> None:
    done = trainwire(*arguments, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "nosuch" in done.stderr and "Traceback" not in done.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == []  # no mlflow.db, no tb/, no cursor
