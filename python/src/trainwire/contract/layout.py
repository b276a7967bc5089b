"""The files of a run's output directory: the stream, and a journal for each of its runs.

```
<dir>/progress.jsonl                   the stream of every run written here (the source of truth)
<dir>/runs/<run_id>/config.json        that run's resolved config
<dir>/runs/<run_id>/config_diff.json   its config against a reference run (`Run(config_reference=...)`)
<dir>/runs/<run_id>/git_dirty.diff     the work tree's uncommitted changes at its start (when dirty)
<dir>/runs/<run_id>/environment.json   its environment record (the provenance, in full)
<dir>/runs/<run_id>/notes.md           notes for people (`trainwire note`); created once
<dir>/runs/<run_id>/summary.json       its summary (schemas/summary)
<dir>/runs/<run_id>/steps.jsonl        the steps the stream's throttle left out
<dir>/runs/<run_id>/series.json        a snapshot of its series store and the offsets it covers
```

There is no pointer to the latest run: each summary lists the runs the stream held before
it (`earlier_runs`), so the latest is the one listing the most. Every file is replaced
atomically, but for `steps.jsonl`, which is appended to in whole lines.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = [
    "CONFIG_DIFF_FILE",
    "CONFIG_FILE",
    "DIFF_FILE",
    "ENVIRONMENT_FILE",
    "JOURNALS_DIR",
    "NOTES_FILE",
    "SERIES_FILE",
    "STEPS_FILE",
    "STREAM_FILE",
    "SUMMARY_FILE",
    "journal_dirs",
    "run_journal_dir",
    "stream_path",
]

#: the stream: the source of truth for everything else here
STREAM_FILE = "progress.jsonl"
#: the directory holding one journal directory per run, named by its run id
JOURNALS_DIR = "runs"
#: a run's resolved config (redacted like `run.started.config`, never cut)
CONFIG_FILE = "config.json"
#: a run's config against its reference run: `{reference, changes: {key: [reference, this]}}`
CONFIG_DIFF_FILE = "config_diff.json"
#: the uncommitted changes of the work tree when a run started (only when dirty)
DIFF_FILE = "git_dirty.diff"
#: a run's environment record: its `run.started.provenance`, never cut
ENVIRONMENT_FILE = "environment.json"
#: free-form notes for people; created once, appended to by `trainwire note`, never overwritten
NOTES_FILE = "notes.md"
#: a run's summary (schemas/summary), rewritten atomically at start, at intervals and at the finish
SUMMARY_FILE = "summary.json"
#: the steps the stream's throttle left out, one compact JSON object a line, appended in batches
STEPS_FILE = "steps.jsonl"
#: a snapshot of the run's series store (`lines.series`) with the stream and step-file offsets it covers
SERIES_FILE = "series.json"


def run_journal_dir(output_dir: str | os.PathLike[str], run_id: str) -> Path:
    """The journal directory of run `run_id` in the output directory `output_dir`."""
    return Path(output_dir) / JOURNALS_DIR / run_id


def journal_dirs(output_dir: str | os.PathLike[str]) -> list[Path]:
    """The journal directories of the runs in `output_dir`, sorted by run id; [] when none."""
    try:
        entries = sorted(os.scandir(Path(output_dir) / JOURNALS_DIR), key=lambda entry: entry.name)
    except OSError:
        return []
    return [Path(entry.path) for entry in entries if entry.is_dir(follow_symlinks=False)]


def stream_path(path: str | os.PathLike[str]) -> Path:
    """The stream a run path names: a run directory's `STREAM_FILE`, or the file itself.

    A path that does not exist yet and has no suffix (`out`, not `out.jsonl`) is a run
    directory to come, so it names the stream that run will write.
    """
    path = Path(path)
    if path.is_dir() or (not path.exists() and not path.suffix):
        return path / STREAM_FILE
    return path
