"""Where the suite lives: package data next to this module, so an installed wheel carries it."""

from __future__ import annotations

import json
from pathlib import Path

#: the suite shipped inside the package: cases, normalisation rules, schemas, suite.json
SUITE_DIR = Path(__file__).resolve().parent / "suite"
#: in a source checkout, the first-party harnesses `run --all` starts (argv relative to the checkout)
HARNESS_LIST = Path("conformance") / "harnesses.json"


def cases_dir(suite: Path = SUITE_DIR) -> Path:
    return suite / "cases"


def normalisation_file(suite: Path = SUITE_DIR) -> Path:
    return suite / "normalisation.json"


def suite_version(suite: Path = SUITE_DIR) -> str:
    """The version in `suite.json`: it changes with any case, expected state or rule."""
    return str(json.loads((suite / "suite.json").read_text(encoding="utf-8"))["version"])


def find_checkout(start: Path | None = None) -> Path | None:
    """The nearest directory at or above `start` holding `conformance/harnesses.json`, if any."""
    here = (start or Path.cwd()).resolve()
    return next((candidate for candidate in (here, *here.parents) if (candidate / HARNESS_LIST).is_file()), None)
