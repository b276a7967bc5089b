"""The files of a run's output directory: the stream and the journal beside it."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["CONFIG_FILE", "DIFF_FILE", "NOTES_FILE", "NOTES_TEMPLATE", "STREAM_FILE", "SUMMARY_FILE", "stream_path"]

#: the stream: the source of truth for everything else here
STREAM_FILE = "progress.jsonl"
#: the latest run's resolved config (redacted like `run.started.config`, never cut)
CONFIG_FILE = "config.json"
#: the uncommitted changes of the work tree when the latest run started (only when dirty)
DIFF_FILE = "git_dirty.diff"
#: free-form notes for people; created empty once, never overwritten
NOTES_FILE = "notes.md"
#: what the notes file holds until someone writes in it (a runs list shows no notes then)
NOTES_TEMPLATE = "# Notes\n\nWhat this run tries, what you saw, what to do next.\n"
#: the latest run's summary (schemas/summary/v1), rewritten atomically at start and finish
SUMMARY_FILE = "summary.json"


def stream_path(path: str | os.PathLike[str]) -> Path:
    """The stream a run path names: a run directory's `STREAM_FILE`, or the file itself.

    A path that does not exist yet and has no suffix (`out`, not `out.jsonl`) is a run
    directory to come, so it names the stream that run will write.
    """
    path = Path(path)
    if path.is_dir() or (not path.exists() and not path.suffix):
        return path / STREAM_FILE
    return path
