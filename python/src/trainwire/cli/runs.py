"""`trainwire runs`, `trainwire diff` and `trainwire journal rebuild`: the journal's commands.

`runs` lists the catalog (`trainwire.reader.catalog`): summaries and stream tails, never
whole streams.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from trainwire.contract.clock import format_ts, parse_timestamp_us
from trainwire.contract.layout import CONFIG_FILE, STREAM_FILE, SUMMARY_FILE
from trainwire.reader.catalog import find_streams, load_summary, run_row
from trainwire.reader.summary import summarise_stream, write_summary

__all__ = ["compare", "register"]

_COLUMNS = ("run_id", "status", "steps", "duration", "last_loss", "best_loss", "git_sha", "started_at")
_SORT_KEYS = ("started", "run_id", "status", "step", "duration", "last_loss", "best_loss")


class JournalError(Exception):
    """A failure of a journal command, reported as one line."""


def register(commands: Any) -> None:
    """Adds `runs`, `diff` and `journal` to the `trainwire` command's subparsers."""
    runs = commands.add_parser(
        "runs",
        help="list the runs under directories",
        description="One row per run found under DIR (default .): id, status (stale included), steps, duration, last and best loss, git sha, start. Reads summaries and stream tails only.",
    )
    runs.add_argument("dirs", nargs="*", type=Path, default=[Path(".")], metavar="DIR")
    runs.add_argument("--status", action="append", metavar="STATUS", help="only runs with this status (repeatable)")
    runs.add_argument("--sort", choices=_SORT_KEYS, default="started", help="sort key (default: started, newest first)")
    runs.add_argument(
        "--stale-after",
        type=float,
        metavar="S",
        help="seconds of silence after which a running run is stale (default: three heartbeat intervals)",
    )
    runs.add_argument("--json", action="store_true", help="print the rows as JSON")
    runs.set_defaults(command=_runs)

    diff = commands.add_parser(
        "diff",
        help="compare two runs: config, provenance, metrics",
        description="Config diff, provenance diff (git sha, dirty, seed, package versions) and metrics side by side. RUN is a run directory or its progress.jsonl.",
    )
    diff.add_argument("run_a", type=Path, metavar="RUN_A")
    diff.add_argument("run_b", type=Path, metavar="RUN_B")
    diff.add_argument("--json", action="store_true", help="print the comparison as JSON")
    diff.set_defaults(command=_diff)

    journal = commands.add_parser(
        "journal", help="the run journal beside a stream", description="Maintain the run journal (see docs/journal.md)."
    )
    actions = journal.add_subparsers(title="actions", metavar="ACTION", required=True)
    rebuild = actions.add_parser(
        "rebuild",
        help="rewrite summary.json from the stream",
        description="Rewrite DIR/summary.json from DIR/progress.jsonl: the same document the writer writes live.",
    )
    rebuild.add_argument("dir", type=Path, metavar="DIR")
    rebuild.set_defaults(command=_rebuild)


def _runs(options: argparse.Namespace) -> int:
    now_us = parse_timestamp_us(format_ts(time.time()))
    rows = []
    for stream in find_streams(options.dirs):
        try:
            row = run_row(stream, now_us, options.stale_after)
        except OSError as error:
            sys.stderr.write(f"trainwire runs: {stream}: {error.strerror or error}\n")
            continue
        if row is not None and (not options.status or row["status"] in options.status):
            rows.append(row)
    rows.sort(key=_sort_key(options.sort), reverse=options.sort in ("started", "step", "duration"))
    if options.json:
        sys.stdout.write(json.dumps(rows, ensure_ascii=False, indent=2) + "\n")
    else:
        _print_table([_cells(row) for row in rows], _COLUMNS)
    return 0


def _sort_key(name: str) -> Any:
    field = {"started": "started_at", "step": "step", "duration": "duration_s"}.get(name, name)
    # rows without the value sort last whichever the direction
    return lambda row: (row[field] is not None, row[field] if row[field] is not None else 0)


def _cells(row: Mapping[str, Any]) -> list[str]:
    steps = "-" if row["step"] is None else f"{row['step']}" + (f"/{row['total_steps']}" if row["total_steps"] else "")
    return [
        row["run_id"],
        row["status"],
        steps,
        _format_duration(row["duration_s"]),
        _format_number(row["last_loss"]),
        _format_number(row["best_loss"]),
        (row["git_sha"] or "-")[:10],
        row["started_at"] or "-",
    ]


def _format_duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    minutes, secs = divmod(int(seconds + 0.5), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _format_number(value: Any) -> str:
    return "-" if value is None else f"{value:.4g}"


def _print_table(rows: list[list[str]], header: tuple[str, ...]) -> None:
    table = [list(header), *rows]
    widths = [max(len(_safe(row[column])) for row in table) for column in range(len(header))]
    for row in table:
        sys.stdout.write("  ".join(_safe(cell).ljust(width) for cell, width in zip(row, widths)).rstrip() + "\n")


def _safe(text: str) -> str:
    """A stream's text as it may reach a terminal: control characters escaped."""
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in str(text))


# -- diff -------------------------------------------------------------------------------------


def compare(run_a: Path, run_b: Path) -> dict[str, Any]:
    """Config, provenance and metrics of two runs, side by side: only what differs in the
    config and provenance, every metric of either run."""
    a, b = _run_record(run_a), _run_record(run_b)
    return {
        "runs": [a["run_id"], b["run_id"]],
        "config": _differences(_flatten(a["config"]), _flatten(b["config"])),
        "provenance": _differences(_flatten(a["provenance"]), _flatten(b["provenance"])),
        "metrics": {
            name: [a["metrics"].get(name), b["metrics"].get(name)]
            for name in sorted(set(a["metrics"]) | set(b["metrics"]))
        },
    }


def _run_record(path: Path) -> dict[str, Any]:
    directory = path.parent if path.is_file() else path
    stream = path if path.is_file() else path / STREAM_FILE
    if not stream.is_file():
        raise JournalError(f"{path}: no {STREAM_FILE} here")
    summary = load_summary(directory / SUMMARY_FILE) or summarise_stream(stream)
    if summary is None:
        raise JournalError(f"{stream}: no valid line")
    started = _first_run_started(stream, summary["run_id"])
    config = _load_json(directory / CONFIG_FILE)
    if config is None:
        config = started.get("config") or {}
    provenance = dict(started.get("provenance") or {})
    metrics = {f"last {name}": value for name, value in summary["last"].items()}
    metrics.update({f"best {name}": best["value"] for name, best in summary["best"].items()})
    metrics.update({"status": summary["status"], "step": summary["step"], "duration_s": summary["duration_s"]})
    return {"run_id": summary["run_id"], "config": config, "provenance": provenance, "metrics": metrics}


def _first_run_started(stream: Path, run_id: str) -> Mapping[str, Any]:
    """The `run.started` line of `run_id`, read until it is found."""
    from trainwire.reader.sources import read_file
    from trainwire.reader.state import StreamReader

    reader = StreamReader()
    for chunk in read_file(stream):
        for line in reader.feed(chunk).dicts:
            if line.get("event") == "run.started" and line.get("run_id") == run_id:
                return line
    return {}


def _load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, Mapping) and value:
        flat: dict[str, Any] = {}
        for key, item in value.items():
            flat.update(_flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return flat
    return {prefix: value} if prefix else {}


def _differences(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, list[Any]]:
    missing = object()
    return {
        key: [None if a.get(key, missing) is missing else a[key], None if b.get(key, missing) is missing else b[key]]
        for key in sorted(set(a) | set(b))
        if a.get(key, missing) != b.get(key, missing)
    }


def _diff(options: argparse.Namespace) -> int:
    try:
        comparison = compare(options.run_a, options.run_b)
    except JournalError as error:
        sys.stderr.write(f"trainwire diff: {error}\n")
        return 1
    if options.json:
        sys.stdout.write(json.dumps(comparison, ensure_ascii=False, indent=2) + "\n")
        return 0
    run_a, run_b = comparison["runs"]
    for section in ("config", "provenance", "metrics"):
        sys.stdout.write(f"{section}\n")
        rows = [[f"  {key}", _show(a), _show(b)] for key, (a, b) in comparison[section].items()]
        _print_table(rows or [["  (no difference)", "", ""]], ("", run_a, run_b))
    return 0


def _show(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.6g}"
    return value if isinstance(value, str) else json.dumps(value)


# -- journal rebuild --------------------------------------------------------------------------


def _rebuild(options: argparse.Namespace) -> int:
    stream = options.dir / STREAM_FILE
    if not stream.is_file():
        sys.stderr.write(f"trainwire journal rebuild: {options.dir}: no {STREAM_FILE} here\n")
        return 1
    summary = summarise_stream(stream)
    if summary is None:
        sys.stderr.write(f"trainwire journal rebuild: {stream}: no valid line\n")
        return 1
    target = write_summary(options.dir, summary)
    sys.stdout.write(f"{target}: {summary['run_id']} {summary['status']}\n")
    return 0
