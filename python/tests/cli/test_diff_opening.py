"""`trainwire diff` takes a run's `run.started` from its journal snapshot, not by reading the
stream, and reads the stream only when the snapshot cannot serve."""

from __future__ import annotations

from pathlib import Path

from trainwire.cli.diff import compare
from trainwire.contract.layout import ENVIRONMENT_FILE, SERIES_FILE, STREAM_FILE, run_journal_dir
from trainwire.writer.run import Run


def _run(directory: Path, seed: int) -> str:
    run = Run(directory, step_interval_s=0, heartbeat_interval_s=None)
    run.start(total_steps=2, provenance={"seed": seed})
    run.step(1, loss=1.0)
    run.finish("succeeded")
    (run_journal_dir(directory, run.run_id) / ENVIRONMENT_FILE).unlink()  # provenance from run.started
    return run.run_id


def _blank_run_started(directory: Path) -> None:
    """The stream's `run.started` made unreadable, its length kept: a scan finds none."""
    stream = directory / STREAM_FILE
    first, newline, rest = stream.read_bytes().partition(b"\n")
    stream.write_bytes(b"x" * len(first) + newline + rest)


def test_diff_reads_run_started_from_the_snapshot_not_the_stream(tmp_path: Path) -> None:
    first, second = _run(tmp_path / "a", seed=7), _run(tmp_path / "b", seed=8)
    _blank_run_started(tmp_path / "a")
    _blank_run_started(tmp_path / "b")
    assert compare(first, second, [tmp_path])["provenance"] == {"seed": [7, 8]}

    (run_journal_dir(tmp_path / "b", second) / SERIES_FILE).unlink()  # no snapshot: the stream is read
    assert compare(first, second, [tmp_path])["provenance"] == {"seed": [7, None]}
