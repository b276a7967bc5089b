"""Paths as the contract writes them: relative to the output directory, `/`-separated,
never escaping it (writer rule 9)."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping

from trainwire._generated.contract import RELATIVE_PATH_PATTERN

__all__ = ["PathLike", "artifact_paths", "checkpoint_field", "relative_path"]

logger = logging.getLogger("trainwire.writer")

PathLike = str | os.PathLike[str]

_RELATIVE_PATH_RE = re.compile(RELATIVE_PATH_PATTERN)


def relative_path(path: PathLike, output_dir: str | None) -> str | None:
    """`path` relative to `output_dir` with `/` separators, or None when it is outside (or
    cannot be written as a contract path).

    An absolute path, or a path relative to the working directory that lies inside the
    output directory, is made relative to it; any other relative path is taken as relative
    to the output directory already.
    """
    try:
        text = os.fspath(path)
        candidates = []
        if output_dir is not None:
            candidates.append(os.path.relpath(os.path.abspath(text), output_dir))
        if not os.path.isabs(text):
            candidates.append(text)
        for candidate in candidates:
            relative = os.path.normpath(candidate).replace(os.sep, "/")
            if relative != ".." and not relative.startswith("../") and _RELATIVE_PATH_RE.fullmatch(relative):
                return relative
    except (TypeError, ValueError):  # not a path, or on another drive (Windows)
        pass
    return None


def checkpoint_field(path: PathLike | None, output_dir: str | None) -> str | None:
    """The `checkpoint` field: `path` relative to `output_dir`, or null (with a WARNING when
    the path is outside it)."""
    if path is None:
        return None
    relative = relative_path(path, output_dir)
    if relative is None:
        logger.warning("trainwire: checkpoint %s is outside the output directory; written as null", path)
    return relative


def artifact_paths(artifacts: Mapping[str, PathLike] | None, output_dir: str | None) -> dict[str, str]:
    """The `artifacts` field: each path relative to `output_dir`; one outside it is left out
    with a WARNING."""
    kept = {}
    for name, path in (artifacts or {}).items():
        relative = relative_path(path, output_dir)
        if relative is None:
            logger.warning("trainwire: artifact %s (%s) is outside the output directory; left out", name, path)
        else:
            kept[str(name)] = relative
    return kept
