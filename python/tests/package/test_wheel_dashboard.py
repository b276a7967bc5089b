"""A wheel built from a clean clone of the repository carries the dashboard page of `trainwire
serve`, which is not committed: the package's build step (python/setup.py) builds it.

The clone is of the committed HEAD; its `typescript/node_modules` links to this checkout's,
so that nothing is downloaded.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from support.paths import ROOT

pytestmark = pytest.mark.slow

PAGE_FILES = ("index.html", "dashboard.js", "dashboard.css", "worker.js", "plot.js")


def _clone(target: Path) -> Path:
    """A clone of this checkout's committed HEAD, with nothing built in it."""
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
    subprocess.run(["git", "clone", "--quiet", "--shared", "--no-checkout", str(ROOT), str(target)], check=True)
    subprocess.run(["git", "-C", str(target), "checkout", "--quiet", head.stdout.strip()], check=True)
    assert not (target / "python" / "src" / "trainwire" / "serve" / "static").exists()
    (target / "typescript" / "node_modules").symlink_to((ROOT / "typescript" / "node_modules").resolve())
    return target


def _pip_wheel(project: Path, out: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    arguments = ["wheel", "--no-deps", "--no-build-isolation", "--no-index", "--quiet", "-w", str(out), str(project)]
    return subprocess.run(
        [sys.executable, "-m", "pip", *arguments], env=env, capture_output=True, text=True, timeout=300
    )


def test_a_wheel_built_from_a_clone_carries_the_dashboard(tmp_path: Path) -> None:
    clone = _clone(tmp_path / "clone")
    built = _pip_wheel(clone / "python", tmp_path / "dist", dict(os.environ))
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "dist").glob("trainwire-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        page = archive.read("trainwire/serve/static/index.html").decode()
    assert {f"trainwire/serve/static/{name}" for name in PAGE_FILES} <= names
    assert "dashboard.js" in page


def test_without_node_the_build_says_what_to_install(tmp_path: Path) -> None:
    clone = _clone(tmp_path / "clone")
    no_node = {**os.environ, "PATH": str(tmp_path / "empty-path")}
    built = _pip_wheel(clone / "python", tmp_path / "dist", no_node)
    assert built.returncode != 0
    assert "needs Node.js 20+ and npm on the PATH" in built.stderr
    assert not list(tmp_path.glob("dist/*.whl"))
