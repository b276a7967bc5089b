"""`make check`: the gates that keep the contract honest.

1. every schema is valid against the JSON Schema 2020-12 metaschema;
2. nothing generated differs from what `make generate` writes (names each file);
3. the v1 schemas are backward compatible with the last released snapshot;
4. the Python package type-checks (mypy, strict; settings in python/pyproject.toml);
5. the package keeps its layers: no import runs up a layer, no circle (import-linter's
   contracts in python/pyproject.toml);
6. the code keeps the house style: `ruff format` and `ruff check` (ruff.toml), Biome for the
   TypeScript (typescript/biome.json); `make format` applies both;
7. the GitHub Actions workflows (.github/workflows/) pass the workflow schema (check-jsonschema).
"""

from __future__ import annotations

import filecmp
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import compat
import generate
from _common import ROOT, SCHEMAS
from jsonschema import Draft202012Validator


def invalid_schemas() -> list[str]:
    problems = []
    for path in sorted(SCHEMAS.rglob("*.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        for error in Draft202012Validator(Draft202012Validator.META_SCHEMA).iter_errors(schema):
            problems.append(
                f"{path.relative_to(ROOT)}: not a valid 2020-12 schema at /{'/'.join(map(str, error.absolute_path))}: {error.message}"
            )
    return problems


def _files(base: Path, rel: str) -> set[str]:
    target = base / rel
    if target.is_file():
        return {rel}
    if not target.exists():
        return set()
    return {str(p.relative_to(base)) for p in target.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def drifted_files(root: Path = ROOT) -> list[str]:
    """Generated files whose committed content differs from a fresh generation."""
    with tempfile.TemporaryDirectory(prefix="trainwire-generate-") as tmp:
        fresh = Path(tmp)
        generate.generate(fresh)
        problems = []
        for rel in generate.GENERATED:
            expected, actual = _files(fresh, rel), _files(root, rel)
            for name in sorted(expected - actual):
                problems.append(f"{name}: missing; run `make generate`")
            for name in sorted(actual - expected):
                problems.append(f"{name}: not produced by `make generate`; remove it")
            for name in sorted(expected & actual):
                if not filecmp.cmp(fresh / name, root / name, shallow=False):
                    problems.append(
                        f"{name}: differs from what `make generate` writes (edited by hand, or not regenerated)"
                    )
        return problems


def type_errors() -> list[str]:
    """What mypy reports on the package, one line per error (empty when it passes)."""
    result = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT / "python", capture_output=True, text=True)
    if result.returncode == 0:
        return []
    return [line for line in result.stdout.splitlines() if ": error:" in line] or [result.stdout + result.stderr]


def layer_breaks() -> list[str]:
    """What import-linter reports broken, one line per contract and import (empty when all are kept)."""
    # this tree's sources, whatever the virtualenv's editable install points at
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python" / "src")}
    command = [str(Path(sys.executable).parent / "lint-imports"), "--no-cache", "--no-logo"]
    result = subprocess.run(command, cwd=ROOT / "python", env=env, capture_output=True, text=True)
    if result.returncode == 0:
        return []
    found = [
        line.strip()
        for line in result.stdout.splitlines()
        if line.rstrip().endswith("BROKEN") or line.lstrip().startswith("- ")
    ]
    return [f"layers: {line}" for line in found] or [result.stdout + result.stderr]


def style_breaks() -> list[str]:
    """What the house style refuses: `ruff format` and `ruff check` on the Python, Biome on the
    TypeScript (settings in ruff.toml and typescript/biome.json). `make format` fixes most."""
    ruff = str(Path(sys.executable).parent / "ruff")
    biome = str(ROOT / "typescript" / "node_modules" / ".bin" / "biome")
    commands = [
        ([ruff, "format", "--check", "--quiet", "."], ROOT),
        ([ruff, "check", "--quiet", "--output-format", "concise", "."], ROOT),
        ([biome, "ci", "--reporter=summary", "."], ROOT / "typescript"),
    ]
    problems = []
    for command, cwd in commands:
        result = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
        if result.returncode != 0:
            shown = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()][:20]
            problems += [f"style: {' '.join(command[1:3])}: {line}" for line in shown]
    return problems


def workflow_breaks(root: Path = ROOT) -> list[str]:
    """What the GitHub Actions workflow schema (check-jsonschema's copy of SchemaStore's,
    shipped in its package: nothing is fetched) finds wrong in `.github/workflows/`, one line
    per finding."""
    workflows = sorted((root / ".github" / "workflows").glob("*.y*ml"))
    if not workflows:
        return []
    checker = Path(sys.executable).parent / ("check-jsonschema.exe" if os.name == "nt" else "check-jsonschema")
    if not checker.is_file():
        return [
            "workflows: check-jsonschema is not installed: install the dev extra "
            "(pip install -c python/constraints.txt -e 'python[dev]')"
        ]
    command = [str(checker), "--builtin-schema", "vendor.github-workflows", "-o", "TEXT"]
    result = subprocess.run(
        [*command, *(str(path.relative_to(root)) for path in workflows)], cwd=root, capture_output=True, text=True
    )
    if result.returncode == 0:
        return []
    found = [line.strip() for line in (result.stdout + result.stderr).splitlines() if "::" in line]
    return [f"workflows: {line}" for line in found] or [f"workflows: check-jsonschema exited {result.returncode}"]


def main() -> int:
    failures = (
        invalid_schemas()
        + drifted_files()
        + compat.check_against_release()
        + type_errors()
        + layer_breaks()
        + style_breaks()
        + workflow_breaks()
    )
    for line in failures:
        print(f"check: {line}", file=sys.stderr)
    if not failures:
        print(
            "check: schemas valid, generated files in sync, v1 compatible with the last release, types check, layers kept, style kept, workflows lint clean"
        )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
