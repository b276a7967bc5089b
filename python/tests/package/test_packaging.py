"""The Python package as users get it: sdist and wheel built from a copy, installed into a fresh venv.

Offline and fast: the venv gets the wheel with `--no-deps`, and its dependencies are made
visible through a `.pth` file naming a directory of links to the installed distributions
(pydantic's closure first, then the `[conformance]` extra's), so each stage sees only what
that install would bring.
"""

from __future__ import annotations

import email
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from support.paths import ROOT

from trainwire.conformance.paths import suite_version

#: the environment of a user: no PYTHONPATH pointing into this checkout
OUTSIDE = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
SUITE_FILES = ("suite.json", "normalisation.json", "cases.schema.json", "validation-cases.json")
SUBCOMMANDS = (
    ["tail"],
    ["state"],
    ["validate"],
    ["stop"],
    ["schema"],
    ["demo"],
    ["demo", "run"],
    ["conformance"],
    ["conformance", "run"],
)


def _closure(*names: str) -> list[metadata.Distribution]:
    """The installed distributions `names` need (their required dependencies, no extras)."""
    seen: dict[str, metadata.Distribution] = {}
    pending = list(names)
    while pending:
        distribution = metadata.distribution(pending.pop())
        key = distribution.metadata["Name"].lower().replace("_", "-")
        if key in seen:
            continue
        seen[key] = distribution
        for text in distribution.requires or []:
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                pending.append(requirement.name)
    return list(seen.values())


def _link_distributions(target: Path, distributions: list[metadata.Distribution]) -> Path:
    """A directory of links to the top-level modules (and metadata) of `distributions`."""
    target.mkdir()
    for distribution in distributions:
        for file in distribution.files or []:
            top = file.parts[0]
            source = Path(str(distribution.locate_file(top)))
            if top in ("..", "__pycache__") or not source.exists() or (target / top).exists():
                continue
            (target / top).symlink_to(source, target_is_directory=source.is_dir())
    return target


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The sdist (built without Node on the PATH) and the wheel built from that sdist."""
    work = tmp_path_factory.mktemp("build")
    shutil.copytree(
        ROOT / "python", work / "project", ignore=shutil.ignore_patterns("*.egg-info", "build", "__pycache__", "tests")
    )
    no_node = {**os.environ, "PATH": str(work / "empty-path")}
    sdist = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from setuptools import build_meta; print(build_meta.build_sdist(sys.argv[1]))",
            str(work / "dist"),
        ],
        cwd=work / "project",
        env=no_node,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert sdist.returncode == 0, sdist.stderr
    sdist_path = work / "dist" / sdist.stdout.strip().splitlines()[-1]
    with tarfile.open(sdist_path) as archive:
        archive.extractall(work / "unpacked", filter="data")
    (unpacked,) = (work / "unpacked").iterdir()
    wheel = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--quiet",
            "-w",
            str(work / "dist"),
            str(unpacked),
        ],
        env=no_node,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert wheel.returncode == 0, wheel.stderr
    (wheel_path,) = (work / "dist").glob("*.whl")
    return {"sdist": sdist_path, "wheel": wheel_path, "work": work}


@pytest.fixture(scope="module")
def venv(built: dict[str, Path]) -> Path:
    """A fresh venv holding the wheel and, through a .pth file, pydantic only."""
    home = built["work"] / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(home)], check=True, timeout=300)
    python = home / "bin" / "python"
    site = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            capture_output=True,
            text=True,
            check=True,
            env=OUTSIDE,
        ).stdout.strip()
    )
    installed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-deps",
            "--no-index",
            "--ignore-installed",
            "--quiet",
            str(built["wheel"]),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=OUTSIDE,
    )
    assert installed.returncode == 0, installed.stderr
    base = _link_distributions(built["work"] / "deps-base", _closure("pydantic"))
    (site / "trainwire-test-deps.pth").write_text(f"{base}\n", encoding="utf-8")
    return home


def _trainwire(venv: Path, *arguments: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(venv / "bin" / "trainwire"), *arguments], cwd=cwd, capture_output=True, text=True, timeout=600, env=OUTSIDE
    )


def test_the_wheel_carries_the_suite_readme_and_license(built: dict[str, Path]) -> None:
    with zipfile.ZipFile(built["wheel"]) as wheel:
        names = wheel.namelist()
        meta = email.message_from_bytes(
            wheel.read(next(name for name in names if name.endswith(".dist-info/METADATA")))
        )
    suite = "trainwire/conformance/suite/"
    assert all(suite + name in names for name in SUITE_FILES)
    cases = {name.split("/")[4] for name in names if name.startswith(suite + "cases/")}
    assert len(cases) == len(list((ROOT / "python/src/trainwire/conformance/suite/cases").iterdir()))
    assert suite + "cases/minimal-run/scenario.json" in names and suite + "cases/minimal-run/stream.ndjson" in names
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names)
    assert meta["License-Expression"] == "Apache-2.0"
    assert (
        meta["Description-Content-Type"] == "text/markdown"
        and "`[conformance]`" in meta.get_payload()
        and "pip install './python[serve]'" in meta.get_payload()  # how to install an extra until published
    )
    assert "Home-page" not in meta and "Project-URL" not in meta
    assert {"conformance", "transformers"} <= set(meta.get_all("Provides-Extra"))
    with tarfile.open(built["sdist"]) as sdist:
        members = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    assert {"LICENSE", "README.md", "pyproject.toml", "src/trainwire/conformance/suite/suite.json"} <= members


def test_without_extras_every_help_works_and_commands_name_their_extra(venv: Path, tmp_path: Path) -> None:
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import trainwire; print(trainwire.__file__)"],
        capture_output=True,
        text=True,
        env=OUTSIDE,
        cwd=tmp_path,
    )
    assert Path(where.stdout.strip()).is_relative_to(venv), where  # the wheel, not this checkout
    for arguments in ([], *SUBCOMMANDS):
        shown = _trainwire(venv, *arguments, "--help", cwd=tmp_path)
        assert shown.returncode == 0 and "usage:" in shown.stdout and "Traceback" not in shown.stderr, (
            arguments,
            shown.stderr,
        )
    conformance = _trainwire(venv, "conformance", "run", "--harness", "harness", cwd=tmp_path)
    assert (conformance.returncode, "Traceback" in conformance.stderr) == (1, False), conformance.stderr
    assert "pip install 'trainwire[conformance]'" in conformance.stderr
    demo = _trainwire(venv, "demo", "train", "--output-dir", str(tmp_path / "demo"), "--steps", "1", cwd=tmp_path)
    assert (demo.returncode, "Traceback" in demo.stderr) == (1, False), demo.stderr
    assert "pip install 'trainwire[transformers]'" in demo.stderr


def test_with_the_conformance_extra_the_suite_runs_from_any_directory(
    venv: Path, built: dict[str, Path], tmp_path: Path
) -> None:
    extra = _link_distributions(built["work"] / "deps-conformance", _closure("jsonschema", "rfc3339-validator"))
    site_pth = next((venv / "lib").glob("python*/site-packages/trainwire-test-deps.pth"))
    site_pth.write_text(site_pth.read_text(encoding="utf-8") + f"{extra}\n", encoding="utf-8")
    harness = f"'{venv / 'bin' / 'python'}' -m trainwire.conformance.harness"
    completed = _trainwire(venv, "conformance", "run", "--harness", harness, cwd=tmp_path)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    version = suite_version()
    assert completed.stdout.startswith(f"conformance suite {version}\n")
    assert "0 failed, 0 skipped, 0 errored" in completed.stdout
    checked = _trainwire(venv, "conformance", "check", cwd=tmp_path)
    assert checked.returncode == 0, checked.stderr
    assert f"suite {version}" in checked.stdout
