"""The install commands the pages print work while trainwire is not on the package indexes:
one text in every page, a wheel built from `python/` as documented installs and imports, and
the npm tarball `npm pack` makes installs into a project and imports (offline, a few seconds)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from support.paths import ROOT

TYPESCRIPT = ROOT / "typescript"
PYTHON_PAGES = ("README.md", "python/README.md", "docs/python.md")
NPM_PAGES = ("README.md", "docs/typescript.md", "typescript/README.md")
#: the environment of a user: no PYTHONPATH pointing into this checkout
OUTSIDE = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}


def shell_blocks(page: str) -> list[str]:
    return re.findall(r"^```sh\n(.*?)^```$", (ROOT / page).read_text(encoding="utf-8"), re.S | re.M)


def block_with(page: str, command: str) -> str:
    found = [block for block in shell_blocks(page) if command in block]
    assert len(found) == 1, f"{page}: no one install block with {command!r}"
    return found[0]


def command(block: str, start: str) -> list[str]:
    """The words of the block's line starting with `start`, before its comment."""
    (line,) = [line for line in block.splitlines() if line.startswith(start)]
    return line.split("#", 1)[0].replace("'", "").split()


def test_every_page_prints_the_same_install_commands() -> None:
    python = {page: block_with(page, "pip wheel") for page in PYTHON_PAGES}
    npm = {page: block_with(page, "npm pack") for page in NPM_PAGES}
    assert len(set(python.values())) == 1, python
    assert len(set(npm.values())) == 1, npm
    for page in {*PYTHON_PAGES, *NPM_PAGES}:
        text = (ROOT / page).read_text().lower()
        assert "not on pypi" in text or "not on npm" in text, f"{page} does not say why it installs from a clone"


def test_the_documented_wheel_builds_installs_and_imports(tmp_path: Path) -> None:
    block = block_with("README.md", "pip wheel")
    clone = tmp_path / "clone"
    shutil.copytree(
        ROOT / "python",
        clone / "python",
        ignore=shutil.ignore_patterns("build", "tests", "__pycache__", "*.egg-info", ".pytest_cache"),
    )
    # as documented, offline: the build's own setuptools, no index
    wheel_command = command(block, "pip wheel")[1:] + ["--no-build-isolation", "--no-index", "--quiet"]
    built = subprocess.run(
        [sys.executable, "-m", "pip", *wheel_command], cwd=clone, env=OUTSIDE, capture_output=True, text=True
    )
    assert built.returncode == 0, built.stderr
    install = command(block, "pip install 'dist/")
    wheel = clone / install[2].split("[")[0]
    assert wheel.is_file(), f"the page names {wheel.name}; built: {os.listdir(clone / 'dist')}"
    site = tmp_path / "site"
    installed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            "--target",
            str(site),
            str(wheel),
        ],
        env=OUTSIDE,
        capture_output=True,
        text=True,
    )
    assert installed.returncode == 0, installed.stderr
    imported = subprocess.run(
        [sys.executable, "-c", "import trainwire, trainwire.cli.commands; print(trainwire.__file__)"],
        cwd=tmp_path,
        env={**OUTSIDE, "PYTHONPATH": str(site)},
        capture_output=True,
        text=True,
    )
    assert imported.returncode == 0 and imported.stdout.startswith(str(site)), imported.stderr
    assert (site / "trainwire" / "serve" / "static" / "index.html").is_file()  # the dashboard page came along


def test_the_documented_npm_tarball_installs_and_imports(tmp_path: Path) -> None:
    block = block_with("README.md", "npm pack")
    assert (TYPESCRIPT / "dist" / "index.js").is_file(), (
        "typescript/dist is missing: run `npm run build` in typescript/"
    )
    tarball_name = Path(command(block, "npm install")[2]).name
    packed = subprocess.run(
        ["npm", "pack", "--pack-destination", str(tmp_path)], cwd=TYPESCRIPT, capture_output=True, text=True
    )
    assert packed.returncode == 0, packed.stderr
    tarball = tmp_path / tarball_name
    assert tarball.is_file(), f"the page names {tarball_name}; packed: {packed.stdout}"
    project = tmp_path / "project"
    project.mkdir()
    (project / "package.json").write_text('{"name": "a-project", "private": true, "type": "module"}\n')
    installed = subprocess.run(
        ["npm", "install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts", str(tarball)],
        cwd=project,
        capture_output=True,
        text=True,
    )
    assert installed.returncode == 0, installed.stderr
    imported = subprocess.run(
        [
            "node",
            "--input-type=module",
            "-e",
            "import { StreamReader } from 'trainwire'; console.log(typeof StreamReader)",
        ],
        cwd=project,
        capture_output=True,
        text=True,
    )
    assert imported.stdout.strip() == "function", imported.stderr
