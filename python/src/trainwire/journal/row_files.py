"""The journal files a runs list shows beside a run's row: its config and its notes.

Each is read only when it is a regular file inside the served directory under its cap
(`journal.files`: over it, the file counts as absent), and cut short, so a row stays
small however large the config or notes are.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from trainwire.contract.layout import CONFIG_FILE
from trainwire.contract.limits import clip
from trainwire.journal.files import MAX_CONFIG_BYTES, read_journal_json
from trainwire.journal.notes import note_entries, read_notes

__all__ = ["MAX_CONFIG_KEYS", "flat_config", "read_config", "read_row_notes"]

#: a row carries at most this many config values (a list of column choices, not the config)
MAX_CONFIG_KEYS = 200


def read_config(directory: Path, *, within: Path | None = None) -> dict[str, Any] | None:
    """The journal's config of the latest run (`config.json`), or None when it is absent,
    over `MAX_CONFIG_BYTES`, not JSON or not an object (its schema: `run.started.config`)."""
    try:
        config = read_journal_json(directory / CONFIG_FILE, MAX_CONFIG_BYTES, within=within)
    except (OSError, ValueError):
        return None
    return config if isinstance(config, dict) else None


def read_row_notes(directory: Path, run_id: str, *, within: Path | None = None) -> str | None:
    """The run's notes (`journal.notes.read_notes`) as one line for its row, cut to a
    message's length: the free text, then each note `trainwire note` added (without its
    date heading), joined by ` · `."""
    notes = read_notes(directory, run_id, within=within)
    if notes is None:
        return None
    entries = note_entries(notes)
    if entries:
        free = notes[: notes.index(f"## {entries[0][0]}")].strip()
        notes = " · ".join(text for text in (free, *(text for _ts, text in entries)) if text)
    return clip(notes)


def flat_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """Scalar leaves of `config` by dotted name (`optimizer.lr`), strings cut, at most
    `MAX_CONFIG_KEYS`: what a config column can show."""
    flat: dict[str, Any] = {}
    for name, value in _leaves(config, ""):
        if len(flat) >= MAX_CONFIG_KEYS:
            break
        flat[name] = clip(value) if isinstance(value, str) else value
    return flat


def _leaves(value: Mapping[str, Any], prefix: str) -> Iterable[tuple[str, Any]]:
    pending: list[tuple[str, Any]] = [(prefix + str(key), item) for key, item in value.items()]
    pending.reverse()
    while pending:  # no recursion: a config nested thousands deep costs a loop
        name, item = pending.pop()
        if isinstance(item, dict):
            pending.extend(reversed([(f"{name}.{key}", child) for key, child in item.items()]))
        elif item is None or isinstance(item, (bool, int, float, str)):
            yield name, item
        else:
            yield name, clip(json.dumps(item, default=str))
