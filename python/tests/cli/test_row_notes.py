"""A run's row (`trainwire runs`, the dashboard's list, which the server fills from the same
row) shows the note added with `trainwire note`, not the journal's notes template."""

from __future__ import annotations

import json
from pathlib import Path

from support.cli_process import trainwire

from trainwire import Run
from trainwire.journal.notes import NOTES_TEMPLATE, read_notes


def test_the_notes_column_shows_the_notes_added_not_the_template(tmp_path: Path) -> None:
    with Run(tmp_path / "exp", run_id="noted", heartbeat_interval_s=None) as run:
        run.start(total_steps=1, provenance=False)
        run.step(1, loss=1.0)
    assert json.loads(trainwire("runs", "--json", str(tmp_path)).stdout)[0]["notes"] is None  # the template alone
    for text in ("lr 0.1 is too low", "try warmup next"):
        noted = trainwire("note", "noted", text, "--in", str(tmp_path))
        assert noted.returncode == 0, noted.stderr
    row = json.loads(trainwire("runs", "--json", str(tmp_path)).stdout)[0]
    assert row["notes"] == "lr 0.1 is too low · try warmup next"
    notes = read_notes(tmp_path / "exp", "noted")  # what the exports send as the run's description
    assert notes is not None and NOTES_TEMPLATE.strip().splitlines()[-1] not in notes
    assert "lr 0.1 is too low" in notes
