"""What a view of runs shows (`trainwire tail`, `trainwire plot`, the notebook): the streams a
path names, and the run it picks from a stream."""

from __future__ import annotations

from pathlib import Path

from trainwire.contract.layout import STREAM_FILE
from trainwire.reader.state import RunState, StreamReader

__all__ = ["stream_files", "target_run"]


def stream_files(path: Path) -> list[Path]:
    """The streams `path` names: a file; a run directory's progress.jsonl; or every run's in a directory of runs.

    A directory with no stream yet names its own progress.jsonl, to be waited for; so does a
    path that does not exist yet and has no suffix (`out`, not `out.jsonl`).
    """
    if not path.is_dir():
        return [path / STREAM_FILE] if not path.exists() and not path.suffix else [path]
    own = path / STREAM_FILE
    if own.exists():
        return [own]
    runs = sorted(path.glob(f"*/{STREAM_FILE}")) + sorted(file for file in path.glob("*.jsonl") if file.is_file())
    return runs or [own]


def target_run(reader: StreamReader, run_id: str | None) -> RunState | None:
    """The run to show: `run_id`, else the last one in the stream."""
    if run_id is not None:
        return reader.run(run_id)
    runs = reader.runs
    return runs[-1] if runs else None
