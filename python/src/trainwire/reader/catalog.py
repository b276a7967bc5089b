"""The runs found under directories, one row each, from summaries and stream tails.

Never reads a whole stream: a finished run whose `summary.json` is newer than its stream
costs one small file; a running one, the last 16 KiB of its stream and of its journal's
step file (the steps the throttle kept out of the stream) as well; one that writes no more
(its process gone, or followed by a later run), once, what came after its journal's last save
(`reader.run_end`). Reads regular
files only (a FIFO named `progress.jsonl` would block a reader forever) and, given `within`,
only files whose resolved path lies inside that directory. A summary is used only when its
schema accepts it and it is within its cap (`journal.files.read_summary`): a hostile
one is read as a run without a journal.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainwire.contract.files import open_regular
from trainwire.contract.finite_json import finite
from trainwire.contract.layout import STREAM_FILE, SUMMARY_FILE, journal_dirs
from trainwire.contract.process_proof import GONE, liveness_of
from trainwire.contract.run_walk import walk_run_directories
from trainwire.journal.files import read_summary
from trainwire.journal.kept_steps import KeptStepsMerge
from trainwire.journal.row_files import flat_config, read_config, read_row_notes
from trainwire.lines.summary import SummaryBuilder
from trainwire.lines.verdict import verdict_of
from trainwire.reader.run_end import brought_to, run_end
from trainwire.reader.verdicts import judge

__all__ = [
    "SUMMARY_VERSIONS",
    "TAIL_BYTES",
    "WINDOW_BYTES",
    "RunRead",
    "find_streams",
    "live_summary",
    "load_summary",
    "read_runs",
    "row_config",
    "run_row",
    "run_rows",
]

#: how much of a stream's start and end a row reads
WINDOW_BYTES = 64 * 1024
#: how much of a running run's stream and step file a row reads for where the run is: the
#: last ~60 steps. The summary (written every 30 s) holds the bests before them; each record
#: costs a row ~20 us, and a row read at this size costs about what a summary does
TAIL_BYTES = 16 * 1024
#: the summary versions this reader reads (a field version 1 lacks reads as null)
SUMMARY_VERSIONS = (1, 2)


def find_streams(roots: list[Path]) -> Iterator[Path]:
    """Every `progress.jsonl` under `roots`, recursively, in a stable order; a tracker's copy
    of a stream (`contract.run_walk`) is not a run."""
    for root in roots:
        if root.is_file():
            yield root
            continue
        for walked in walk_run_directories(root):
            if STREAM_FILE in walked.files:
                yield Path(walked.path) / STREAM_FILE


def run_row(
    stream: Path, now_us: int, stale_after_s: float | None = None, *, within: Path | None = None
) -> dict[str, Any] | None:
    """The row of the latest run of `stream`, or None when it holds no valid line. With
    `within`, a journal file or stream leading outside that directory is not read
    (`NotARegularFile` for the stream, no summary for the journal).

    The row's `config` is the run's config flattened (`flat_config`), from the journal's
    `config.json` or, without a journal, from the run's `run.started` when the stream's
    first 64 KiB or last 16 KiB hold it; `notes` the run's notes (`read_row_notes`), `notes_count`
    how many dated notes the summary counts."""
    journals = _journal_summaries(stream.parent, within)
    latest = _read_latest(stream, _latest_summary(stream.parent, journals, within), within)
    return latest.row(now_us, stale_after_s) if latest is not None else None


@dataclass(frozen=True)
class RunRead:
    """What the files say about one run: its row but for what depends on the time it is
    shown at (a running run's status turns stale, its duration grows), so a reader that
    keeps it (the server's runs list) turns it into a row at any moment without a read."""

    summary: Mapping[str, Any]
    #: the status fixed when read: a finished run's, or `stale` for a run a later one of its
    #: stream followed while it was `running`, or whose process its host proved gone; None
    #: for one that may be alive
    status: str | None
    #: a live run's last line (`ts`): where its duration stops if it died
    last_ts: str | None
    stream: Path
    #: the run's config flattened (`flat_config`): what its row carries
    config: Mapping[str, Any]
    notes: str | None

    @property
    def timeless(self) -> bool:
        """Whether the row is the same whatever the time it is shown at."""
        return self.status is not None

    def row(self, now_us: int, stale_after_s: float | None = None) -> dict[str, Any]:
        """The row at `now_us`: the run's verdict (`lines.verdict`) and what the table shows of it."""
        summary = self.summary
        if summary["status"] == "running" and self.last_ts is not None:
            summary = {**summary, "last_line_at": self.last_ts}
        if self.status == "stale" and summary["status"] == "running":
            verdict = verdict_of(summary, now_us=now_us, stale_after_s=stale_after_s, liveness=GONE)
        else:
            verdict = judge(summary, now_us, stale_after_s)
        return _row(summary, verdict, self.stream, self.config, self.notes)


def read_runs(stream: Path, *, within: Path | None = None) -> list[RunRead]:
    """Every run of `stream`'s directory (as `run_rows` lists them), each summary read once."""
    journals = _journal_summaries(stream.parent, within)
    latest = _read_latest(stream, _latest_summary(stream.parent, journals, within), within)
    reads = []
    for journal, summary in journals.items():
        if summary is None or (latest is not None and summary["run_id"] == latest.summary["run_id"]):
            continue
        last_ts = None
        if summary["status"] == "running":  # a later run followed it: told to its last line
            ended = run_end(stream, summary, within=within)
            if ended is not None:
                summary, last_ts = ended.summary, ended.last_ts
        status = "stale" if summary["status"] == "running" else summary["status"]
        config, notes = row_config(read_config(journal, within=within)), _notes(stream, summary, within)
        reads.append(RunRead(summary, status, last_ts, stream, config, notes))
    reads.sort(key=lambda read: len(read.summary.get("earlier_runs") or []))
    return [*reads, latest] if latest is not None else reads


def _journal_summaries(directory: Path, within: Path | None) -> dict[Path, dict[str, Any] | None]:
    """Each journal directory of `directory` (sorted by run id) and its valid summary or None."""
    return {journal: load_summary(journal / SUMMARY_FILE, within=within) for journal in journal_dirs(directory)}


def _latest_summary(
    directory: Path, journals: Mapping[Path, dict[str, Any] | None], within: Path | None
) -> tuple[Path, dict[str, Any] | None]:
    """The summary of the directory's latest run (`latest_journal`'s pick), or a 0.1
    journal's beside the stream, with its path."""
    if not journals:
        path = directory / SUMMARY_FILE
        return path, load_summary(path, within=within)

    def chain(journal: Path) -> tuple[int, str]:
        summary = journals[journal]
        return (len(summary["earlier_runs"]) if summary is not None else -1, journal.name)

    journal = max(journals, key=chain)
    return journal / SUMMARY_FILE, journals[journal]


def _read_latest(stream: Path, found: tuple[Path, dict[str, Any] | None], within: Path | None) -> RunRead | None:
    summary_path, summary = found
    if summary is not None and summary["status"] != "running" and _written_after(summary_path, stream):
        # a finished run whose summary is newer than every line: nothing to read
        config = read_config(summary_path.parent, within=within)
        return RunRead(summary, summary["status"], None, stream, row_config(config), _notes(stream, summary, within))
    started: dict[str, dict[str, Any]] = {}
    tail = _window_summary(stream, (False,), within, started, search=_in_search(summary))
    latest = tail.summary()
    if summary is None or (latest is not None and latest["run_id"] != summary["run_id"]):
        # no journal (another writer), or a run newer than the journal: head and tail
        partial = _window_summary(stream, (True, False), within, started)
        summary, latest, journaled = partial.summary(), partial.summary(), False
        last_ts = partial.last_ts
        config = started.get(summary["run_id"]) if summary is not None else None
    else:
        journaled = True
        last_ts = tail.last_ts if latest is not None else summary.get("finished_at")
        config = read_config(summary_path.parent, within=within)
    if summary is None:
        return None
    status = _fixed_status(summary)
    ended = run_end(stream, summary, within=within) if status == "stale" and journaled else None
    if ended is not None:  # its process is gone: told from every line after the journal's last save
        summary, last_ts = ended.summary, ended.last_ts or last_ts
        status = _fixed_status(summary)  # its end may be in the lines after the save
    elif latest is not None and summary["status"] == "running":
        summary = brought_to(summary, latest)
    notes = _notes(stream, summary, within)
    return RunRead(summary, status, last_ts, stream, row_config(config), notes)


def _in_search(summary: Mapping[str, Any] | None) -> bool:
    """Whether the journal's summary is a search's (a trial started before its save)."""
    return summary is not None and summary.get("trials") is not None


def _fixed_status(summary: Mapping[str, Any]) -> str | None:
    """The status a row of `summary` keeps whenever it is shown: a finished run's, `stale`
    for a running one whose process its host proves gone (a pid and start time name one
    process for ever: it never comes back); None while it may be alive."""
    if summary["status"] != "running":
        return str(summary["status"])
    return "stale" if liveness_of(summary.get("process")) == GONE else None


def _notes(stream: Path, summary: Mapping[str, Any], within: Path | None) -> str | None:
    return read_row_notes(stream.parent, summary["run_id"], within=within)


def live_summary(stream: Path, summary: dict[str, Any], *, within: Path | None = None) -> dict[str, Any]:
    """A `running` run's journal summary brought to where the run is: its stream's last
    `TAIL_BYTES` and the steps its journal kept after them (a run killed mid-way included). Any
    other summary as it is."""
    if summary["status"] != "running":
        return summary
    try:
        latest = _window_summary(stream, (False,), within, {}, search=_in_search(summary)).summary()
    except OSError:
        return summary
    followed = latest is not None and latest["run_id"] != summary["run_id"]
    if followed or liveness_of(summary.get("process")) == GONE:  # it writes no more: told to its last line
        ended = run_end(stream, summary, within=within)
        if ended is not None:
            return ended.summary
    if latest is None or followed:
        return summary
    return brought_to(summary, latest)


def run_rows(
    stream: Path, now_us: int, stale_after_s: float | None = None, *, within: Path | None = None
) -> list[dict[str, Any]]:
    """A row for every run with a journal beside `stream`, in stream order; the latest's is
    `run_row`'s (its tail read when it may be live), an earlier run's is its summary (a run
    a later one followed while it was still `running` never finished: `stale`). A stream
    without journals (another writer, or runs without one) gives `run_row`'s one row."""
    return [read.row(now_us, stale_after_s) for read in read_runs(stream, within=within)]


def _row(
    summary: Mapping[str, Any],
    verdict: Mapping[str, Any],
    stream: Path,
    config: Mapping[str, Any],
    notes: str | None,
) -> dict[str, Any]:
    """The row of a run: its verdict (`lines.verdict`) and what the table shows of it."""
    name, tags = summary.get("name"), summary.get("tags")
    return {
        "run_id": summary["run_id"],
        "name": name if isinstance(name, str) else None,
        "tags": [tag for tag in tags if isinstance(tag, str)] if isinstance(tags, list) else [],
        "status": verdict["status"],
        "step": verdict["step"],
        "total_steps": summary["total_steps"],
        "duration_s": verdict["duration_s"],
        "last_loss": summary["last"].get("loss"),
        "best_loss": (verdict["best"].get("loss") or {}).get("value"),
        "git_sha": summary["git_sha"],
        "started_at": summary["started_at"],
        "config": dict(config),
        "notes": notes,
        "path": str(stream),
        "directory": str(stream.parent),
        "resumed_from": summary.get("resumed_from"),
        "earlier_runs": list(summary.get("earlier_runs") or []),
        "notes_count": summary.get("notes") or 0,
        "trials": summary.get("trials"),  # {count, best: {trial, metric, value, params}} of a search
        "completeness": summary.get("completeness"),  # what never reached the files, when known
        "verdict": dict(verdict),
    }


def _written_after(summary: Path, stream: Path) -> bool:
    try:
        return summary.stat().st_mtime_ns >= stream.stat().st_mtime_ns
    except OSError:
        return False


def load_summary(path: Path, *, within: Path | None = None) -> dict[str, Any] | None:
    """The journal summary at `path`, or None when it is missing, not a regular file (or
    outside `within`), over its cap, or not a summary this version reads: one its schema
    (`schemas/summary`, versions `SUMMARY_VERSIONS`) accepts (`read_summary`). A non-finite
    number in it (`NaN`, `Infinity`: not JSON, though the parser takes them) reads as null,
    as writer rule 7 writes one in the stream."""
    summary = read_summary(path, within=within)
    return None if summary is None else finite(summary)


def row_config(config: Mapping[str, Any] | None) -> dict[str, Any]:
    """The config a row carries: flattened (`flat_config`), a non-finite number as null."""
    return {name: finite(value) for name, value in flat_config(config or {}).items()}


def _window_summary(
    stream: Path,
    heads: tuple[bool, ...],
    within: Path | None,
    started: dict[str, dict[str, Any]],
    *,
    search: bool = False,
) -> SummaryBuilder:
    """A summary of the lines in the first (True) and last (False) windows of `stream`, the
    last (`TAIL_BYTES`) with the steps the run's journal kept (its step file's last
    `TAIL_BYTES`); `started` gets the config of each `run.started` among them, by run id.
    `search`: the latest run is a search, so the tail's values before its first trial event
    are a trial's."""
    from trainwire.reader.state import StreamReader

    builder = SummaryBuilder.piece_of_search() if search else SummaryBuilder(any_line_switches=True)
    for head in heads:
        lines = StreamReader().feed(_window(stream, head, within)).dicts
        if not head:  # the end of the stream: with the steps kept in and after it
            kept = KeptStepsMerge(stream.parent, tail_bytes=TAIL_BYTES, within=within)
            lines = [*kept.merge(lines), *kept.flush()]
        for line in lines:
            builder.add(line)
            if line.get("event") == "run.started" and isinstance(line.get("config"), dict):
                started[line["run_id"]] = line["config"]
    return builder


def _window(stream: Path, head: bool, within: Path | None) -> bytes:
    with open_regular(stream, within=within) as file:
        size = os.fstat(file.fileno()).st_size
        window = WINDOW_BYTES if head else TAIL_BYTES
        if head or size <= window:
            data = file.read(window)
            return data[: data.rfind(b"\n") + 1]
        file.seek(size - window)
        data = file.read(window)
    return data[data.find(b"\n") + 1 :]  # the first line is cut: drop it
