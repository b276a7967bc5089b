"""`trainwire runs` lists its runs in the order its help says: by directory, each directory's
runs as resume chains (not newest first across directories)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from support.cli_process import trainwire

from trainwire import Run
from trainwire.contract.clock import FakeClock


def one_run(directory: Path, run_id: str, started: str, **start: Any) -> None:
    with Run(directory, run_id=run_id, clock=FakeClock(started), heartbeat_interval_s=None) as run:
        run.start(total_steps=1, provenance=False, **start)
        run.step(1, loss=1.0)


def test_runs_lists_directories_by_their_latest_start_and_each_directory_as_resume_chains(tmp_path: Path) -> None:
    one_run(tmp_path / "a", "first", "2026-12-01T10:00:00Z")
    one_run(tmp_path / "b", "other", "2026-12-01T11:00:00Z")
    one_run(tmp_path / "a", "resumed", "2026-12-01T12:00:00Z", resumed_from={"run_id": "first", "step": 1})
    listing = trainwire("runs", str(tmp_path))
    assert listing.returncode == 0, listing.stderr
    firsts = [line.split()[0] for line in listing.stdout.splitlines() if line.strip()]
    assert [word for word in firsts if word in ("first", "other", "└")] == ["first", "└", "other"]
    assert "└ resumed" in listing.stdout

    helped = trainwire("runs", "--help").stdout
    said = " ".join(helped.split())
    assert "newest first" not in said
    assert "as resume chains" in said and "grouped by directory" in said
    assert "ordered by --sort" in said
