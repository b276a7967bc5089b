"""Files that other processes read while they change: they appear whole or not at all."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["write_json_atomically"]


def write_json_atomically(target: Path, body: Any) -> None:
    """Write `body` as JSON to `target` through a temporary file beside it and `os.replace`,
    so that a reader sees the old file or the new one, never half of it."""
    fd, temp_name = tempfile.mkstemp(dir=target.parent, prefix=f"{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as temp:
            json.dump(body, temp, ensure_ascii=False)
        os.replace(temp_name, target)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise
