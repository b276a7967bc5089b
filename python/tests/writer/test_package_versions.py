"""The package versions of `run.started`'s provenance: the answers of `importlib.metadata`,
read without importing it when the layout is the plain one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from trainwire.writer.provenance import KEY_PACKAGES

NAMES = [*KEY_PACKAGES, "Pydantic_Core", "typing.extensions", "no-such-package-here"]


def _child(names: list[str], path: Path | None, *, metadata_first: bool) -> dict[str, Any]:
    """`installed_versions(names)` in a fresh interpreter, `path` first on sys.path; with
    `metadata_first`, `importlib.metadata` is loaded before (so it gives the answer)."""
    code = (
        "import json, sys\n"
        + ("import importlib.metadata\n" if metadata_first else "")
        + "from trainwire.writer.package_versions import installed_versions\n"
        + f"versions = installed_versions({names!r})\n"
        + "print(json.dumps({'versions': versions, 'metadata': 'importlib.metadata' in sys.modules}))\n"
    )
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(path), env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def _dist_info(root: Path, directory: str, file: str, version: str) -> None:
    (root / directory / file).parent.mkdir(parents=True)
    name = directory.partition("-")[0].partition(".")[0]
    (root / directory / file).write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\nA description.\nVersion: 0.0.1\n", encoding="utf-8"
    )


def test_the_installed_versions_are_importlib_metadatas_without_importing_it() -> None:
    fast = _child(NAMES, None, metadata_first=False)
    reference = _child(NAMES, None, metadata_first=True)
    assert fast["metadata"] is False
    assert fast["versions"] == reference["versions"]
    assert "pydantic" in fast["versions"] and "no-such-package-here" not in fast["versions"]


@pytest.mark.parametrize(
    ("directory", "file", "package", "read_directly"),
    [
        ("numpy-99.0.dist-info", "METADATA", "numpy", True),  # the plain layout, read directly
        (
            "pydantic.egg-info",
            "PKG-INFO",
            "pydantic",
            True,
        ),  # a source tree's metadata (an editable install), read directly
    ],
)
def test_a_distribution_earlier_on_the_path_is_the_one_read(
    tmp_path: Path, directory: str, file: str, package: str, read_directly: bool
) -> None:
    _dist_info(tmp_path, directory, file, "99.0")
    fast = _child(NAMES, tmp_path, metadata_first=False)
    assert fast["metadata"] is not read_directly
    assert fast["versions"][package] == "99.0"
    assert fast["versions"] == _child(NAMES, tmp_path, metadata_first=True)["versions"]
