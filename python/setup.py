"""The package's build step beside pyproject.toml: the dashboard page of `trainwire serve`.

The page (`src/trainwire/serve/static/`) is built from `../typescript` and not committed, so
a wheel or an sdist made from a git clone would lack it. When it is missing and the
TypeScript sources are there, `npm ci` (only without `node_modules`) and `npm run build`
make it first; without Node.js the build stops with one message saying what to install.
An editable install (`pip install -e`, `make setup`) is left alone: the checkout's own
page is what it serves, and `make` builds that.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist
from setuptools.errors import SetupError

HERE = Path(__file__).resolve().parent
PAGE = HERE / "src" / "trainwire" / "serve" / "static" / "index.html"
TYPESCRIPT = HERE.parent / "typescript"


def build_dashboard() -> None:
    """Build the page into the package when it is missing; fail clearly when it cannot be."""
    if PAGE.is_file():
        return
    if not (TYPESCRIPT / "package.json").is_file():
        raise SetupError(
            f"the dashboard page ({PAGE.relative_to(HERE)}) is not built and there is no {TYPESCRIPT} "
            "to build it from: build from a clone of the whole repository"
        )
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        raise SetupError(
            "building trainwire's dashboard page needs Node.js 20+ and npm on the PATH "
            "(https://nodejs.org), or the page built beforehand: cd typescript && npm ci && npm run build"
        )
    if not (TYPESCRIPT / "node_modules").exists():
        _npm(npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
    _npm(npm, "run", "--silent", "build")
    if not PAGE.is_file():
        raise SetupError(f"npm run build in {TYPESCRIPT} made no {PAGE.relative_to(HERE)}")


def _npm(npm: str, *arguments: str) -> None:
    done = subprocess.run([npm, *arguments], cwd=TYPESCRIPT, check=False)
    if done.returncode != 0:
        raise SetupError(f"npm {' '.join(arguments)} in {TYPESCRIPT} failed (exit {done.returncode})")


class BuildPyWithDashboard(build_py):
    def run(self) -> None:
        if not self.editable_mode:
            build_dashboard()
        super().run()


class SdistWithDashboard(sdist):
    def run(self) -> None:
        build_dashboard()
        super().run()


setup(cmdclass={"build_py": BuildPyWithDashboard, "sdist": SdistWithDashboard})
