"""docs/integrations.md: the example files it names exist, and its commands parse."""

from __future__ import annotations

import re
import shlex

import pytest
from support.paths import ROOT

from trainwire.cli.commands import _parser

DOC = (ROOT / "docs" / "integrations.md").read_text(encoding="utf-8")
COMMANDS = re.findall(r"^\$ trainwire (.+)$", DOC, flags=re.M)


def test_every_example_named_exists() -> None:
    named = set(re.findall(r"examples/[\w/]+\.py", DOC))
    assert named == {
        "examples/accelerate_train.py",
        "examples/keras_train.py",
        "examples/lightning_train.py",
        "examples/plain_loop.py",
    }
    assert all((ROOT / path).is_file() for path in named)


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_parses(command: str) -> None:
    options = _parser().parse_args(shlex.split(command, comments=True))
    assert callable(options.command)


def test_the_export_commands_are_there() -> None:
    assert {command.split()[1] for command in COMMANDS if command.startswith("export")} == {
        "mlflow",
        "tensorboard",
        "wandb",
        "kubeflow",
    }
