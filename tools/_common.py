"""Paths and the one JSON layout shared by the generators."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "schemas"


def dump_json(obj: object) -> str:
    """The layout of every generated JSON file: stable, readable, newline-terminated."""
    return json.dumps(obj, indent=2, ensure_ascii=False) + "\n"


def rewrite_hand_written(out_root: Path, files: tuple[str, ...], rewrite: Callable[[str, str], str]) -> None:
    """Writes each of `files` (hand-written, relative to the root) under `out_root` as
    `rewrite(text, path)` makes it: its generated regions filled."""
    for rel in files:
        target = out_root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(rewrite((ROOT / rel).read_text(encoding="utf-8"), rel), encoding="utf-8")
