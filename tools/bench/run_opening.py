"""Opening a run at once: the dashboard's first chart of a 1 GB run (the scale's large
stream) against a 1 MB one, each a single long run whose journal snapshot covers its
stream, so the page reads the snapshot and nothing of the stream before it; and the same
1 GB run appended to a 1 MB run in one stream (a resume), each run's snapshot where its
writer left it: the small run's at its end, the big run's at the stream's end."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

from context import PYTHON, ROOT, Context, run_child
from records import Figure, Measurement, Target, median
from scale import MB
from served import Served, open_page, serving
from streams import write_one_run

__all__ = ["FIGURES"]

#: pages opened of each run, alternated, by scale: the ratio of each pair is a round
ROUNDS_BY_SCALE = {"tiny": 1, "small": 3, "full": 5}
SMALL_RUN, BIG_RUN = "bench-00000001", "bench-00000002"


def _rebuild_journals(directory: Path) -> None:
    """`journal rebuild`: every run's journal, its snapshot covering the whole stream."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python" / "src")}
    run_child([PYTHON, "-m", "trainwire", "journal", "rebuild", str(directory)], timeout=3600, env=env)


def _journaled_run(directory: Path, size: int) -> Path:
    """`directory` holding one run of about `size` bytes and the journal `journal rebuild`
    writes for it (the snapshot the writer would have saved at the end)."""
    directory.mkdir()
    write_one_run(directory / "progress.jsonl", size)
    _rebuild_journals(directory)
    return directory


def _small_then_big(directory: Path, small_size: int, big_size: int) -> Path:
    """`directory` holding a small run then a big one in one stream, with the journals their
    writers leave: the small run's snapshot at its end (where the big run starts), the big
    run's at the end of the stream."""
    _journaled_run(directory, small_size)
    small_journal = directory / "runs" / SMALL_RUN
    kept = directory.parent / f"{directory.name}-{SMALL_RUN}"
    shutil.copytree(small_journal, kept)
    write_one_run(directory / "progress.jsonl", big_size, BIG_RUN, append=True)
    _rebuild_journals(directory)
    shutil.rmtree(small_journal)
    shutil.move(kept, small_journal)  # as the small run's writer left it, before the big run began
    return directory


def _open(served: Served, directory: Path) -> dict[str, float]:
    """The page's first chart and its whole run shown (the stream's last byte read), in seconds."""
    result = open_page(served, directory.name, (directory / "progress.jsonl").stat().st_size)
    return {"first_chart_s": float(result["first_chart_s"]), "loaded_s": float(result["loaded_s"])}


def _against_small_run(ctx: Context, name: str, build: Callable[[Path, int], Path], what: str) -> Measurement:
    """The first chart of the run `build` makes (from the scale's large size) against a
    single run of the scale's small size, pages opened alternately, one server for both."""
    root = ctx.scratch_dir(name)
    large = build(root / "large", ctx.scale.large_bytes)
    small = _journaled_run(root / "small", ctx.scale.small_bytes)
    rounds = ROUNDS_BY_SCALE[ctx.scale.name]
    with serving(root) as served:  # keyed by their directories' names
        opens = [(_open(served, large), _open(served, small)) for _ in range(rounds)]
    pairs = [(big["first_chart_s"], little["first_chart_s"]) for big, little in opens]
    large_s = median([pair[0] for pair in pairs])
    small_s = median([pair[1] for pair in pairs])
    large_loaded_s = median([big["loaded_s"] for big, _ in opens])
    large_mb = (large / "progress.jsonl").stat().st_size / MB
    small_mb = (small / "progress.jsonl").stat().st_size / MB
    return Measurement(
        large_s,
        baseline=small_s,
        rounds=[big / little for big, little in pairs],
        notes=f"first chart of {what} ({large_mb:.0f} MB) {large_s:.2f} s, of a {small_mb:.1f} MB run {small_s:.2f} s "
        f"(median of {rounds} page opens each, alternated); the {large_mb:.0f} MB stream wholly shown "
        f"(its last byte read) in {large_loaded_s:.2f} s",
    )


def _opening(ctx: Context) -> Measurement:
    return _against_small_run(ctx, "opening", _journaled_run, "a run")


def _opening_after_a_small_run(ctx: Context) -> Measurement:
    def build(directory: Path, size: int) -> Path:
        return _small_then_big(directory, ctx.scale.small_bytes, size)

    return _against_small_run(ctx, "opening-two-runs", build, "a small run followed by a big one")


FIGURES = [
    Figure(
        "dashboard: first chart of a 1 GB run against a 1 MB one, both with a journal snapshot (Chromium)",
        "s",
        Target("<= 1.5x", "ratio_at_most", 1.5),
        _opening,
    ),
    Figure(
        "dashboard: first chart of a small run followed by a big one in one stream, against a 1 MB run (Chromium)",
        "s",
        Target("<= 1.5x", "ratio_at_most", 1.5),
        _opening_after_a_small_run,
    ),
]
