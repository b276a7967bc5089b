"""Files that other processes read while they change: they appear whole or not at all."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["write_json_atomically", "write_text_atomically"]


def write_text_atomically(target: Path, text: str) -> None:
    """Write `text` to `target` through a temporary file beside it and `os.replace`, so
    that a reader sees the old file or the new one, never half of it."""
    fd, temp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as temp:
            temp.write(text)
        os.replace(temp_name, target)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise


def write_json_atomically(target: Path, body: Any, *, indent: int | None = None) -> None:
    """`body` as JSON (`indent`ed and newline-ended when `indent` is given), atomically."""
    text = json.dumps(body, ensure_ascii=False, indent=indent)
    write_text_atomically(target, text + "\n" if indent is not None else text)
