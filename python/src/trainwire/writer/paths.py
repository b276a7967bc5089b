"""Paths as the contract writes them: relative to the output directory, `/`-separated,
never escaping it (writer rule 9)."""

from __future__ import annotations

import os
import re
from typing import Union

from trainwire._generated.contract import RELATIVE_PATH_PATTERN

__all__ = ["PathLike", "relative_path"]

PathLike = Union[str, os.PathLike[str]]

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
