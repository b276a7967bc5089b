"""`make bench`: measure every figure of the performance contract, print a table, write bench/results.json.

Usage: run.py [--only WORD ...] [--output PATH] [--report-only]
The size comes from TRAINWIRE_BENCH_SCALE (tiny, small, full; default full). A figure whose
component is missing or broken becomes an error row; the other figures still run. The exit
status is 1 when a figure misses its target or errors (0 with --report-only).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import bundle_size
import dashboard
import dashboard_page
import emitter
import emitter_start
import journal
import python_reader
import run_opening
import runs_list
import search
import serve_load
import trainer
import typescript_reader
from context import ROOT, Context
from records import Figure, Record, error_record
from scale import scale_from_env

import conformance

FIGURES: list[Figure] = [
    *emitter.FIGURES,
    *emitter_start.FIGURES,
    *python_reader.FIGURES,
    *typescript_reader.FIGURES,
    *bundle_size.FIGURES,
    *trainer.FIGURES,
    *search.FIGURES,
    *conformance.FIGURES,
    *dashboard.FIGURES,
    *dashboard_page.FIGURES,
    *run_opening.FIGURES,
    *serve_load.FIGURES,
    *journal.FIGURES,
    *runs_list.FIGURES,
]


def _measure(figure: Figure, ctx: Context) -> Record:
    started = time.perf_counter()
    print(f"bench: {figure.name} ...", file=sys.stderr, flush=True)
    try:
        record = figure.record(figure.measure(ctx))
    except Exception as error:
        record = error_record(figure, error)
    print(f"bench: {figure.name}: {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
    return record


def _number(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.3g}" if abs(value) < 1000 else f"{value:.0f}"


def _spread(record: Record) -> str:
    return f"{_number(record.spread[0])}-{_number(record.spread[1])}" if record.spread else "-"


def format_table(records: list[Record]) -> str:
    """The records as an aligned plain-text table (also pasted into docs/performance.md).

    `ratio` is the median over interleaved rounds where the figure has rounds, `spread` their range.
    """
    verdicts = {True: "pass", False: "FAIL", None: "-"}
    rows = [("figure", "unit", "value", "baseline", "ratio", "spread", "target", "pass")]
    rows += [
        (
            r.name,
            r.unit,
            _number(r.value),
            _number(r.baseline),
            _number(r.ratio),
            _spread(r),
            r.target,
            verdicts[r.passed],
        )
        for r in records
    ]
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * width for width in widths))
    notes = [f"- {r.name}: {r.notes}" for r in records if r.notes]
    return "\n".join(lines + [""] + notes)


def _node_version() -> str | None:
    node = shutil.which("node")
    if node is None:
        return None
    done = subprocess.run([node, "--version"], capture_output=True, text=True, check=False)
    return done.stdout.strip() or None


def machine() -> dict[str, object]:
    """What the figures were measured on; printed above the table and kept in results.json."""
    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "node": _node_version(),
        "platform": platform.platform(),
    }


def _selected(only: list[str]) -> list[Figure]:
    if not only:
        return FIGURES
    return [figure for figure in FIGURES if any(word.lower() in figure.name.lower() for word in only)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--only", nargs="+", default=[], metavar="WORD", help="measure the figures whose name contains WORD"
    )
    parser.add_argument("--output", type=Path, default=ROOT / "bench" / "results.json")
    parser.add_argument("--report-only", action="store_true", help="exit 0 even when a figure misses its target")
    args = parser.parse_args(argv)
    scale = scale_from_env()
    host = machine()
    print(
        f"bench: scale {scale.name}; {host['cpus']} cores, Python {host['python']}, Node {host['node'] or 'missing'}, "
        f"{host['platform']}",
        file=sys.stderr,
        flush=True,
    )
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="trainwire-bench-") as scratch:
        ctx = Context(scale, Path(scratch))
        records = [_measure(figure, ctx) for figure in _selected(args.only)]
    results = {
        "scale": scale.name,
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": host,
        "wall_time_s": round(time.perf_counter() - started, 1),
        "records": [record.to_json() for record in records],
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"{host['cpus']} cores, Python {host['python']}, Node {host['node'] or 'missing'}, {host['platform']}\n")
    print(format_table(records))
    missed = [record.name for record in records if record.passed is False]
    print(f"\nscale {scale.name}, {results['wall_time_s']} s; written to {args.output}")
    if missed:
        print(f"missed: {', '.join(missed)}", file=sys.stderr)
    return 1 if missed and not args.report_only else 0


if __name__ == "__main__":
    sys.exit(main())
