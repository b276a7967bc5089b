"""What `make demo` and `make test` install, read from `make -n` in a copy of the Makefile and
the pins: the demo's extras only for the demo, every extra for the tests."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import tomllib
from support.paths import ROOT, SOURCES

INSTALLED_EXTRAS = re.compile(r"pip install .* -e 'python\[([^\]]*)\]'")


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """The Makefile and the files its targets depend on, nothing installed or built."""
    for name in ("Makefile", "python/pyproject.toml", "python/constraints.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    for name in ("package.json", "package-lock.json", "tsconfig.json", "tsconfig.base.json"):
        (tmp_path / "typescript").mkdir(exist_ok=True)
        (tmp_path / "typescript" / name).write_text("{}\n", encoding="utf-8")
    return tmp_path


def dry_run(checkout: Path, target: str) -> list[str]:
    # a make of its own: under `make test` the inherited MAKELEVEL and MAKEFLAGS would add
    # "Entering directory" lines to what it prints
    env = {name: value for name, value in os.environ.items() if name not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
    done = subprocess.run(["make", "-n", target], cwd=checkout, capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def installed_extras(commands: list[str]) -> set[str]:
    (extras,) = [match.group(1) for command in commands if (match := INSTALLED_EXTRAS.search(command))]
    return set(extras.split(","))


def test_make_demo_installs_the_extras_the_demo_requires_and_nothing_else(checkout: Path) -> None:
    commands = dry_run(checkout, "demo")
    demo = (SOURCES / "cli" / "demo.py").read_text(encoding="utf-8")
    assert installed_extras(commands) == set(re.findall(r'require_extra\("(\w+)"', demo)) == {"transformers"}
    # neither Node.js nor a browser: the demo is Python alone
    assert not [command for command in commands if "npm" in command or "setup-system" in command]
    assert commands[-1].endswith("-m trainwire demo run")


def test_make_test_installs_every_extra(checkout: Path) -> None:
    pins = tomllib.loads((checkout / "python" / "pyproject.toml").read_text(encoding="utf-8"))
    assert installed_extras(dry_run(checkout, "test")) == set(pins["project"]["optional-dependencies"])
