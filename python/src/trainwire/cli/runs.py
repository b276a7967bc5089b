"""`trainwire runs` and `trainwire journal rebuild`: the journal's commands (`diff` and
`note` are `cli.diff` and `cli.note`, registered here with them).

`runs` lists the catalog (`trainwire.reader.catalog`): summaries and stream tails, never
whole streams; every run of a directory, grouped by directory, a resume under the run it
resumes.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from trainwire.cli.diff import register_diff
from trainwire.cli.errors import CommandError
from trainwire.cli.note import register_note
from trainwire.cli.status_line import params_text
from trainwire.cli.table import print_table, safe
from trainwire.contract.clock import format_ts, parse_timestamp_us
from trainwire.contract.collector import collector_paused
from trainwire.contract.finite_json import finite_json
from trainwire.contract.humanize import format_duration
from trainwire.contract.layout import STREAM_FILE, SUMMARY_FILE
from trainwire.lines.verdict import status_text
from trainwire.reader.run_listing import list_runs

__all__ = ["register"]

_COLUMNS = (
    "run_id",
    "name",
    "status",
    "steps",
    "duration",
    "last_loss",
    "best_loss",
    "trials",
    "git_sha",
    "started_at",
    "notes",
)
_NAME_WIDTH = 40  # a name and tags past it are cut with an ellipsis: the table stays readable
_SORT_KEYS = ("started", "run_id", "status", "step", "duration", "last_loss", "best_loss")


def register(commands: Any) -> None:
    """Adds `runs`, `diff` and `journal` to the `trainwire` command's subparsers."""
    runs = commands.add_parser(
        "runs",
        help="list the runs under directories",
        description="One row per run found under DIR (default .): id, name and tags, status (stale included), steps, duration, last and best loss, trials, git sha, start, notes. Rows are grouped by directory; the directories are ordered by --sort, and within one directory its runs keep the order they were written in, as resume chains (a resumed run right under the run it resumes, indented). Reads summaries and stream tails only.",
    )
    runs.add_argument("dirs", nargs="*", type=Path, default=[Path(".")], metavar="DIR")
    runs.add_argument("--status", action="append", metavar="STATUS", help="only runs with this status (repeatable)")
    runs.add_argument(
        "--sort",
        choices=_SORT_KEYS,
        default="started",
        help="orders the directories by the highest value of this key among their runs: descending for started, "
        "step and duration, ascending for the others (default: started, the directory with the latest start first); "
        "the runs of one directory stay in their resume chains",
    )
    runs.add_argument(
        "--stale-after",
        type=float,
        metavar="S",
        help="seconds of silence after which a running run is stale (default: three heartbeat intervals)",
    )
    runs.add_argument("--json", action="store_true", help="print the rows as JSON")
    runs.set_defaults(command=_runs)

    register_diff(commands)
    register_note(commands)

    journal = commands.add_parser(
        "journal", help="the run journal beside a stream", description="Maintain the run journal (see docs/journal.md)."
    )
    actions = journal.add_subparsers(title="actions", metavar="ACTION", required=True)
    rebuild = actions.add_parser(
        "rebuild",
        help=f"rewrite every run's {SUMMARY_FILE} and series snapshot from the stream and step files",
        description=f"Rewrite DIR/runs/<run_id>/{SUMMARY_FILE} and the series snapshot of every run of DIR/{STREAM_FILE} from the stream and the run's step file: the same bytes the writer writes live. A 0.1 journal is migrated first; a torn last line of a step file is cut off.",
    )
    rebuild.add_argument("dir", type=Path, metavar="DIR")
    rebuild.set_defaults(command=_rebuild)


def _runs(options: argparse.Namespace) -> int:
    for directory in options.dirs:
        if not directory.exists():  # a typo listed nothing with exit 0, like a directory without runs
            raise CommandError(f"{directory}: no such directory")
    now_us = parse_timestamp_us(format_ts(time.time()))
    groups: list[list[dict[str, Any]]] = []

    def unreadable(stream: Path, error: OSError) -> None:
        sys.stderr.write(f"trainwire runs: {stream}: {error.strerror or error}\n")

    # tens of thousands of small objects, none in a cycle, live until the rows are printed
    with collector_paused():
        for _stream, reads in list_runs(options.dirs, unreadable):
            rows = [read.row(now_us, options.stale_after) for read in reads]
            rows = [row for row in rows if not options.status or row["status"] in options.status]
            if rows:
                groups.append(rows)
    key = _sort_key(options.sort)
    reverse = options.sort in ("started", "step", "duration")
    # directories by their newest run; within one, the runs as chains
    groups.sort(key=lambda rows: max(map(key, rows)), reverse=reverse)
    if options.json:
        # one row a line, through the C encoder (`indent` would take the slow one): 10,000 rows in a blink
        lines = [finite_json(row, compact=False) for rows in groups for row in rows]
        sys.stdout.write("[\n" + ",\n".join(lines) + "\n]\n" if lines else "[]\n")
        return 0
    for index, rows in enumerate(groups):
        sys.stdout.write(("\n" if index else "") + f"{safe(rows[0]['directory'])}\n")
        print_table([_cells(row, depth) for row, depth in _chains(rows)], _COLUMNS)
    return 0


def _chains(rows: list[dict[str, Any]]) -> list[tuple[dict[str, Any], int]]:
    """The rows in stream order, each with its depth in its resume chain (0: resumes no run here)."""
    depth: dict[str, int] = {}
    ordered = []
    for row in rows:
        parent = row["resumed_from"]
        depth[row["run_id"]] = depth[parent] + 1 if parent in depth else 0
        ordered.append((row, depth[row["run_id"]]))
    return ordered


def _sort_key(name: str) -> Any:
    field = {"started": "started_at", "step": "step", "duration": "duration_s"}.get(name, name)
    # rows without the value sort last whichever the direction
    return lambda row: (row[field] is not None, _sort_value(field, row[field]))


def _sort_value(field: str, value: Any) -> Any:
    if value is None:
        return 0
    # a time by its instant, not its text: `10:00:05Z` is before `10:00:05.5Z`
    return parse_timestamp_us(value) if field == "started_at" else value


def _cells(row: Mapping[str, Any], depth: int) -> list[str]:
    steps = "-" if row["step"] is None else f"{row['step']}" + (f"/{row['total_steps']}" if row["total_steps"] else "")
    return [
        ("  " * (depth - 1) + "└ " if depth else "") + row["run_id"],
        _name(row.get("name"), row.get("tags") or []),
        status_text(row["verdict"]),
        steps,
        "-" if row["duration_s"] is None else format_duration(row["duration_s"]),
        _format_number(row["last_loss"]),
        _format_number(row["best_loss"]),
        _trials(row.get("trials")),
        (row["git_sha"] or "-")[:10],
        row["started_at"] or "-",
        str(row["notes_count"] or "-"),
    ]


def _name(name: str | None, tags: list[str]) -> str:
    """The run's name and its tags (`bert sweep [baseline, fp16]`), cut to `_NAME_WIDTH`."""
    text = " ".join(([name] if name else []) + ([f"[{', '.join(tags)}]"] if tags else [])) or "-"
    return text if len(text) <= _NAME_WIDTH else text[: _NAME_WIDTH - 1] + "…"


def _trials(trials: Mapping[str, Any] | None) -> str:
    """A search's trial count and its best trial's params: `3, best 2: lr=0.01`."""
    if not trials:
        return "-"
    best = trials.get("best")
    if best is None:
        return str(trials["count"])
    params = params_text(best.get("params"))  # the verdict's rule: by name, integers as integers
    return f"{trials['count']}, best {best['trial']}" + (f": {params}" if params else "")


def _format_number(value: Any) -> str:
    return "-" if value is None else f"{value:.4g}"


# -- journal rebuild --------------------------------------------------------------------------


def _rebuild(options: argparse.Namespace) -> int:
    stream = options.dir / STREAM_FILE
    if not stream.is_file():
        sys.stderr.write(f"trainwire journal rebuild: {options.dir}: no {STREAM_FILE} here\n")
        return 1
    from trainwire.journal.rebuild import rebuild_journals  # the reader's models: only here
    from trainwire.reader.state import StreamReader

    rebuilt = rebuild_journals(options.dir, StreamReader())
    if not rebuilt:
        sys.stderr.write(f"trainwire journal rebuild: {stream}: no valid line\n")
        return 1
    for run_id, summary in rebuilt:
        sys.stdout.write(f"{options.dir / 'runs' / run_id}: {run_id} {summary['status']}\n")
    return 0
