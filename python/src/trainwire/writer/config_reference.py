"""`Run(config_reference=...)`: a run's config against a reference run's, recorded at start in
its journal's `config_diff.json` (`trainwire diff --against` shows it)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from trainwire.contract.config_diff import differences, flatten
from trainwire.contract.files import write_json_atomically
from trainwire.contract.layout import CONFIG_DIFF_FILE, CONFIG_FILE
from trainwire.journal.files import MAX_CONFIG_BYTES, read_journal_json
from trainwire.journal.lookup import find_journal

__all__ = ["config_diff", "write_config_diff"]


def config_diff(config: Mapping[str, Any], reference: str | os.PathLike[str], output_dir: Path) -> dict[str, Any]:
    """`{reference: {run_id, path}, changes: {key: [reference's, this run's]}}`; the reference
    is a run id (looked for under `output_dir` and its parent), a journal or an output directory.
    A reference not found gives `changes: null` and says so."""
    journal = find_journal(reference, [output_dir, output_dir.parent])
    referenced: Any = None
    if journal is not None:
        try:
            referenced = read_journal_json(journal / CONFIG_FILE, MAX_CONFIG_BYTES)
        except (OSError, ValueError):
            referenced = None
    if journal is None or not isinstance(referenced, Mapping):
        return {"reference": {"run_id": None, "path": str(reference)}, "changes": None, "problem": "no config found"}
    return {
        "reference": {"run_id": journal.name, "path": str(journal)},
        "changes": differences(flatten(referenced), flatten(config)),
    }


def write_config_diff(journal_dir: Path, config: Mapping[str, Any], reference: str | os.PathLike[str]) -> None:
    """Writes the run's `config_diff.json` beside its config."""
    output_dir = journal_dir.parent.parent
    write_json_atomically(journal_dir / CONFIG_DIFF_FILE, config_diff(config, reference, output_dir), indent=2)
