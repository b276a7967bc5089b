"""Optional dependencies: a command that needs an extra names the `pip install` that brings it."""

from __future__ import annotations

import importlib.util

#: the top-level module each optional dependency installs, and the extra that brings it
EXTRA_OF_MODULE = {
    "transformers": "transformers",
    "accelerate": "transformers",
    "torch": "transformers",
    "jsonschema": "conformance",
    "rfc3339_validator": "conformance",
    "matplotlib": "plot",
    "IPython": "notebook",
    "optuna": "optuna",
    "ray": "ray",
    "lightning": "lightning",
    "keras": "keras",
}


class MissingExtra(ImportError):
    """An optional dependency is not installed; the message says which extra brings it.

    An `ImportError`, so that `except ImportError` around an optional integration still works."""

    def __init__(self, module: str, extra: str) -> None:
        super().__init__(f"this needs {module}, which is not installed: pip install 'trainwire[{extra}]'", name=module)
        self.module = module
        self.extra = extra


def require_extra(extra: str, *modules: str) -> None:
    """Raise `MissingExtra` unless every module of `extra` can be imported (checked without importing it)."""
    for module in modules or (name for name, owner in EXTRA_OF_MODULE.items() if owner == extra):
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # a finder refusing it, or `sys.modules[module] = None`
            found = False
        if not found:
            raise MissingExtra(module, extra)


def missing_extra(error: ModuleNotFoundError) -> MissingExtra | None:
    """The extra that would have prevented `error`, if its module belongs to one."""
    module = (error.name or "").partition(".")[0]
    extra = EXTRA_OF_MODULE.get(module)
    return MissingExtra(module, extra) if extra else None
