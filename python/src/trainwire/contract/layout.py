"""The files of a run's output directory: the stream and the journal beside it."""

from __future__ import annotations

__all__ = ["CONFIG_FILE", "DIFF_FILE", "NOTES_FILE", "STREAM_FILE", "SUMMARY_FILE"]

#: the stream: the source of truth for everything else here
STREAM_FILE = "progress.jsonl"
#: the latest run's resolved config (redacted like `run.started.config`, never cut)
CONFIG_FILE = "config.json"
#: the uncommitted changes of the work tree when the latest run started (only when dirty)
DIFF_FILE = "git_dirty.diff"
#: free-form notes for people; created empty once, never overwritten
NOTES_FILE = "notes.md"
#: the latest run's summary (schemas/summary/v1), rewritten atomically at start and finish
SUMMARY_FILE = "summary.json"
