"""The scripts of `examples/`, loaded as modules so that tests reuse their models and data."""

from __future__ import annotations

import importlib.util
from types import ModuleType

from support.paths import ROOT

EXAMPLES = ROOT / "examples"


def load_example(name: str) -> ModuleType:
    """`examples/<name>.py` as a module (its `main` not run)."""
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
