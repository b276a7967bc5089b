"""Paths and the one JSON layout shared by the generators."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "schemas"


def dump_json(obj: object) -> str:
    """The layout of every generated JSON file: stable, readable, newline-terminated."""
    return json.dumps(obj, indent=2, ensure_ascii=False) + "\n"
