"""What a view of runs shows (`trainwire tail`, `trainwire plot`, the notebook): the streams a
path names, and the run it picks from a stream."""

from __future__ import annotations

from pathlib import Path

from trainwire.contract.layout import STREAM_FILE, stream_path
from trainwire.reader.state import RunState, StreamReader

__all__ = ["stream_files", "target_run"]


def stream_files(path: Path) -> list[Path]:
    """The streams `path` names: its stream (`stream_path`), or every run's in a directory of runs.

    A directory with neither names its own stream, to be waited for (docs/decisions.md).
    """
    own = stream_path(path)
    if own.exists() or not path.is_dir():
        return [own]
    runs = sorted(path.glob(f"*/{STREAM_FILE}")) + sorted(file for file in path.glob("*.jsonl") if file.is_file())
    return runs or [own]


def target_run(reader: StreamReader, run_id: str | None) -> RunState | None:
    """The run to show: `run_id`, else the last one in the stream."""
    if run_id is not None:
        return reader.run(run_id)
    runs = reader.runs
    return runs[-1] if runs else None
