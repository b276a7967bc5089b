"""`make check`: the gates that keep the contract honest.

1. every schema is valid against the JSON Schema 2020-12 metaschema;
2. nothing generated differs from what `make generate` writes (names each file);
3. the v1 schemas are backward compatible with the last released snapshot;
4. the Python package type-checks (mypy, strict; settings in python/pyproject.toml).
"""

from __future__ import annotations

import filecmp
import json
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


def main() -> int:
    failures = invalid_schemas() + drifted_files() + compat.check_against_release() + type_errors()
    for line in failures:
        print(f"check: {line}", file=sys.stderr)
    if not failures:
        print("check: schemas valid, generated files in sync, v1 compatible with the last release, types check")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
