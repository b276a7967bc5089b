"""Shared fixtures of the tool tests; the tools are scripts, not a package."""

import shutil
import sys
from pathlib import Path

import pytest

# the tools are scripts, not a package: make them importable as their own modules
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import generate  # noqa: E402
from _common import ROOT  # noqa: E402


@pytest.fixture(scope="module")
def generated_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tree holding a copy of every generated path, as committed."""
    root = tmp_path_factory.mktemp("tree")
    for rel in generate.GENERATED:
        source = ROOT / rel
        if source.is_dir():
            shutil.copytree(source, root / rel, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, root / rel)
    return root
