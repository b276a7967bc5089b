"""Installed versions of a few packages, as `importlib.metadata.version` gives them, without
importing `importlib.metadata` when it is not loaded yet: it brings `email`, `zipfile` and
`csv`, tens of milliseconds of a run's start for the versions in `run.started`.

The common layouts are read directly: `.dist-info` and `.egg-info` directories in the
directories of `sys.path` (an editable install leaves the latter in the source tree), the
first match in path order, the `Version` header of its `METADATA` or `PKG-INFO`. Anything
else (an egg, a zip on the path, another distribution finder, a header not found) is left
to `importlib.metadata`, so the answer is its answer.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable

__all__ = ["installed_versions"]


#: the file holding the headers, by the kind of metadata directory read directly
_HEADERS_FILE = {".dist-info": "METADATA", ".egg-info": "PKG-INFO"}


class _Unsure(Exception):
    """The layout is not the plain one: `importlib.metadata` decides."""


def installed_versions(names: Iterable[str]) -> dict[str, str]:
    """`{name: version}` of the installed `names`, in their order; a missing one is left out."""
    names = list(names)
    if "importlib.metadata" not in sys.modules:
        try:
            return _from_dist_info(names)
        except (_Unsure, OSError, UnicodeDecodeError):
            pass
    return _from_importlib_metadata(names)


def _from_importlib_metadata(names: list[str]) -> dict[str, str]:
    import importlib.metadata

    versions = {}
    for name in names:
        try:
            versions[name] = importlib.metadata.version(name)
        except Exception:  # not installed, or broken metadata
            continue
    return versions


def _normalize(name: str) -> str:
    """A distribution name as `importlib.metadata` compares it."""
    return re.sub(r"[-_.]+", "_", name).lower()


def _from_dist_info(names: list[str]) -> dict[str, str]:
    from importlib.machinery import PathFinder

    if any(finder is not PathFinder and hasattr(finder, "find_distributions") for finder in sys.meta_path):
        raise _Unsure
    wanted = {_normalize(name): name for name in names}
    found: dict[str, str] = {}
    for entry in sys.path:
        directory = entry or "."
        if not os.path.isdir(directory):
            if os.path.exists(directory):  # a zip on the path
                raise _Unsure
            continue
        for child in os.listdir(directory):
            base, extension = os.path.splitext(child.lower())
            if extension not in (".dist-info", ".egg-info", ".egg", ".egg-link"):
                continue
            name = wanted.get(_normalize(base.partition("-")[0]))
            if name is None or name in found:
                continue
            headers = _HEADERS_FILE.get(extension)
            if headers is None or not os.path.isdir(os.path.join(directory, child)):
                raise _Unsure
            found[name] = _metadata_version(os.path.join(directory, child, headers))
    return {name: found[name] for name in names if name in found}


def _metadata_version(path: str) -> str:
    """The `Version` header of a `METADATA` or `PKG-INFO` file (the headers end at the first blank line)."""
    with open(path, encoding="utf-8") as metadata:
        for line in metadata:
            if not line.strip():
                break
            if line[:8].lower() == "version:":
                return line[8:].strip()
    raise _Unsure
