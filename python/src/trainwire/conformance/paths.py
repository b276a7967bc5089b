"""Where the suite lives: the repository root, the cases, the harness list."""

from __future__ import annotations

from pathlib import Path

#: the checkout this package is installed from (editable install, src layout)
_PACKAGE_ROOT = Path(__file__).resolve().parents[4]


def find_root(start: Path | None = None) -> Path:
    """The nearest directory at or above `start` holding `conformance/cases`, else the package's checkout."""
    here = (start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / "conformance" / "cases").is_dir():
            return candidate
    return _PACKAGE_ROOT


def conformance_dir(root: Path) -> Path:
    return root / "conformance"


def cases_dir(root: Path) -> Path:
    return root / "conformance" / "cases"


def suite_version(root: Path) -> int:
    """The suite's version (`conformance/suite.json`); its changelog says what each one added."""
    import json

    return int(json.loads((conformance_dir(root) / "suite.json").read_text(encoding="utf-8"))["version"])

