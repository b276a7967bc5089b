"""A run that can write no more (its process gone, or a later run of its stream followed it)
told to its last line: its journal's summary, written at the run's start, every 30 s and at each
trial's end, with every line and kept step that came after the save it was written at.

A row, `tail`'s ending and `diff` read a running run's tail (the last 16 or 64 KiB of its
stream and of its step file) on top of its summary, which is enough while the run goes on (the
next save folds the rest). A run killed between two saves gets no next save: a best among the
steps between the save and the tail would be missed for ever, and each view would tell it from
a window of its own. Here it is read once, from where the save left off (its snapshot's
offsets, which are at line boundaries the snapshot's check proves), so that every view tells
the run's end from all of its lines, as `journal rebuild` would.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from trainwire.contract.files import read_file
from trainwire.contract.layout import STEPS_FILE, run_journal_dir
from trainwire.journal.kept_steps import KeptStepsMerge
from trainwire.journal.opening import read_snapshot
from trainwire.lines.summary import SummaryBuilder, is_lower_better

__all__ = ["MAX_AFTER_SAVE_BYTES", "RunEnd", "brought_to", "run_end"]

#: the most of a stream, and of a step file, read past a journal's last save; a run that wrote
#: more than this after it keeps the view of its tail
MAX_AFTER_SAVE_BYTES = 64 * 1024 * 1024


class RunEnd:
    """A run's summary brought to its last line, and that line's time (None without a line
    after the save)."""

    __slots__ = ("last_ts", "summary")

    def __init__(self, summary: dict[str, Any], last_ts: str | None) -> None:
        self.summary = summary
        self.last_ts = last_ts


def run_end(stream: Path, summary: Mapping[str, Any], *, within: Path | None = None) -> RunEnd | None:
    """`summary`, the journal summary of a `running` run of `stream` that can write no more,
    brought to the run's last line; None when its snapshot does not say where the save was
    (missing, over its cap, not of this run or not at a line boundary of the stream), or when
    more than `MAX_AFTER_SAVE_BYTES` of the stream or of the step file follow it."""
    run_id = summary["run_id"]
    journal = run_journal_dir(stream.parent, run_id)
    snapshot = read_snapshot(stream, journal, within=within)
    if snapshot is None:
        return None
    steps_offset = snapshot["steps_offset"]
    try:
        if os.stat(journal / STEPS_FILE).st_size - steps_offset > MAX_AFTER_SAVE_BYTES:
            return None
    except OSError:
        pass  # no step file: no kept step to put back
    try:
        lines = _own_lines_after(stream, snapshot["stream_offset"], run_id, within)
    except OSError:
        return None
    if lines is None:
        return None
    kept = KeptStepsMerge(
        stream.parent,
        offsets={run_id: steps_offset},
        last_seqs={run_id: snapshot["state"]["last_seq"]},
        within=within,
    )
    builder = SummaryBuilder.after_save(_open_trial(snapshot["state"]))
    for line in [*kept.merge(lines), *kept.flush()]:
        builder.add(line)
    latest = builder.summary()
    if latest is None or latest["run_id"] != run_id:
        return RunEnd(dict(summary), None)
    return RunEnd(brought_to(summary, latest, after_save=True), builder.last_ts)


def _open_trial(state: Mapping[str, Any]) -> int | None:
    """The trial open at the save (the last started that had not ended), else None."""
    running = [record["trial"] for record in state["trials"]["list"] if record["status"] == "running"]
    return running[-1] if running else None


def _own_lines_after(stream: Path, offset: int, run_id: str, within: Path | None) -> list[dict[str, Any]] | None:
    """The valid lines of `run_id` from `offset` of `stream` on, up to a later run's start (a
    run followed by another writes no more); None past `MAX_AFTER_SAVE_BYTES`."""
    from trainwire.reader.state import StreamReader

    reader = StreamReader(offset=offset)
    own: list[dict[str, Any]] = []
    for chunk in read_file(stream, offset=offset, within=within):
        for line in reader.feed(chunk).dicts:
            if line["run_id"] == run_id:
                own.append(line)
            elif line["event"] == "run.started":
                return own
        if reader.consumed_bytes - offset > MAX_AFTER_SAVE_BYTES:
            return None
    return own


def brought_to(summary: Mapping[str, Any], latest: Mapping[str, Any], *, after_save: bool = False) -> dict[str, Any]:
    """The journal's summary (written at start, at each trial's end, every 30 s and at the end)
    with the status, step, last values, better bests, last line and checkpoint of `latest`, the
    summary of a later piece of the run: the lines after the save (`after_save`), or its tail,
    which may hold some before it. The trials add up after the save; a tail counts at least the
    trials it saw."""
    objective = summary.get("objective") or {}
    best = dict(summary["best"])
    for name, found in latest["best"].items():
        if _better(found["value"], best.get(name), name, objective):
            best[name] = found
    brought = {
        **summary,
        "status": latest["status"],
        "step": latest["step"],
        "last": {**summary["last"], **latest["last"]},
        "best": best,
        "last_line_at": latest.get("last_line_at") or summary.get("last_line_at"),
        # what the piece saw last wins: the checkpoint saved since the journal's last write
        **{key: latest[key] for key in ("checkpoint", "checkpoint_from") if latest.get(key) is not None},
    }
    if latest.get("trials") is not None:
        brought["trials"] = _trials(summary.get("trials"), latest["trials"], objective, after_save)
    return brought


def _trials(
    held: Mapping[str, Any] | None, found: Mapping[str, Any], objective: Mapping[str, Any], after_save: bool
) -> dict[str, Any]:
    if held is None:
        return dict(found)
    count = held["count"] + found["count"] if after_save else max(held["count"], found["count"])
    best, other = found.get("best"), held.get("best")
    if best is None or (other is not None and not _better(best["value"], other, best["metric"], objective)):
        best = other
    return {"count": count, "best": best}


def _better(value: float, held: Mapping[str, Any] | None, name: str, objective: Mapping[str, Any]) -> bool:
    """Whether `value` of the series `name` beats the `held` best (its direction: the search's
    objective's, else the name's)."""
    if held is None:
        return True
    lower = objective.get("goal") == "min" if objective.get("name") == name else is_lower_better(name)
    return bool(value < held["value"] if lower else value > held["value"])
