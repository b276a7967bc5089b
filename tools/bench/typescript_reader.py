"""TypeScript reader figures, measured by the Node scripts in typescript/bench/ on the compiled package."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from context import ROOT, Context, run_child
from python_reader import CHUNK_BYTES
from reattach import measure_reattach
from records import Figure, Measurement, Target, median, round_ratios
from scale import MB

__all__ = ["FIGURES"]

_PACKAGE = ROOT / "typescript"


def node_script(script: str, *args: object, timeout: float = 600) -> dict[str, Any]:
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("node is not on PATH")
    if not (_PACKAGE / "dist").is_dir():
        raise RuntimeError("typescript/dist is missing: run `npm run build` in typescript/")
    done = run_child([node, "--expose-gc", f"bench/{script}", *map(str, args)], timeout=timeout, cwd=_PACKAGE)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _compare_reader(ctx: Context, script: str) -> Measurement:
    """StreamReader (decode, validate, fold) against split + JSON.parse, alternated in one process."""
    path = ctx.stream(ctx.scale.reader_bytes)
    size = path.stat().st_size
    result = node_script(script, path, max(5, ctx.scale.reader_rounds))
    return Measurement(
        size / MB / median(result["ours"]),
        size / MB / median(result["baseline"]),
        rounds=round_ratios(result["ours"], result["baseline"], throughput=True),
        notes=f"{result['engine']}; {size / MB:.0f} MB stream, {CHUNK_BYTES >> 10} KiB chunks, {len(result['ours'])} rounds",
    )


def _throughput(ctx: Context) -> Measurement:
    return _compare_reader(ctx, "reader-throughput.mjs")


def _chromium_throughput(ctx: Context) -> Measurement:
    return _compare_reader(ctx, "reader-throughput-chromium.mjs")


def _fold_memory(ctx: Context) -> Measurement:
    path = ctx.stream(ctx.scale.large_bytes)
    report = node_script("fold-memory.mjs", path)
    return Measurement(
        (report["peak_bytes"] - report["start_bytes"]) / MB,
        notes=(
            f"{report['bytes'] / MB:.0f} MB stream, {report['runs']} runs, "
            f"{report['bytes'] / MB / report['seconds']:.1f} MB/s; RSS after start-up {report['start_bytes'] / MB:.0f} MB"
        ),
    )


def _reattach(ctx: Context) -> Measurement:
    def time_reattach(path: Path, offset: int) -> list[float]:
        return node_script("reattach.mjs", path, offset, ctx.scale.reattach_repeats)["seconds"]

    return measure_reattach(ctx, time_reattach)


def _runs_reuse(ctx: Context) -> Measurement:
    runs = 20_000
    result = node_script("runs-reuse.mjs", runs, ctx.scale.reattach_repeats)
    return Measurement(
        median(result["ours"]) * 1000,
        median(result["baseline"]) * 1000,
        notes=f"{runs} runs, one changed between calls; baseline copies every run at each call",
    )


FIGURES = [
    Figure(
        "TypeScript reader + fold, validated",
        "MB/s",
        Target(">= 0.9x split + JSON.parse", "ratio_at_least", 0.9),
        _throughput,
    ),
    Figure(
        "TypeScript reader + fold, Chromium",
        "MB/s",
        Target(">= 0.9x split + JSON.parse", "ratio_at_least", 0.9),
        _chromium_throughput,
    ),
    Figure(
        "TypeScript run-state fold, peak RSS", "MB", Target("<= 100 MB above start", "value_at_most", 100), _fold_memory
    ),
    Figure(
        "TypeScript re-attach near the end", "ms", Target("<= 2x the same on 1 MB", "ratio_at_most", 2.0), _reattach
    ),
    Figure(
        "TypeScript runs() with one run changed",
        "ms",
        Target("<= 0.1x copying every run", "ratio_at_most", 0.1),
        _runs_reuse,
    ),
]
