"""`trainwire runs` over many run directories against walking the same directories.

Both sides are whole `python` processes, alternated: the figure is how much reading the
summaries (and the runs cache) adds to finding the runs. The runs are of two weights
(`many_runs`): half finished, half killed mid-way with ~240 KB in their step file. The
first listing, which fills the runs cache, is timed apart and reported in the notes.
"""

from __future__ import annotations

import json
import time

from context import PYTHON, Context, run_child
from many_runs import RUNS_BY_SCALE, runs_tree
from records import Figure, Measurement, Target, median, round_ratios

__all__ = ["FIGURES"]

ROUNDS = 5
_WALK = "import os, sys; print(sum('progress.jsonl' in files for _, _, files in os.walk(sys.argv[1])))"


def _listing(runs_dir: str) -> float:
    started = time.perf_counter()
    done = run_child([PYTHON, "-m", "trainwire", "runs", runs_dir, "--json"], timeout=1200)
    seconds = time.perf_counter() - started
    rows = json.loads(done.stdout)
    walked = run_child([PYTHON, "-c", _WALK, runs_dir], timeout=600)
    if len(rows) != int(walked.stdout):
        raise RuntimeError(f"trainwire runs listed {len(rows)} of {walked.stdout.strip()} runs")
    return seconds


def _runs_listing(ctx: Context) -> Measurement:
    runs_dir = str(runs_tree(ctx))
    first = _listing(runs_dir)  # reads every run (and folds the killed ones' tails): fills the cache
    listed: list[float] = []
    walked: list[float] = []
    for _ in range(ROUNDS):
        listed.append(_listing(runs_dir))
        started = time.perf_counter()
        run_child([PYTHON, "-c", _WALK, runs_dir], timeout=600)
        walked.append(time.perf_counter() - started)
    return Measurement(
        median(listed),
        median(walked),
        rounds=round_ratios(listed, walked),
        notes=f"{RUNS_BY_SCALE.get(ctx.scale.name, 10_000)} runs, half finished, half killed mid-way; the first listing (cache empty) "
        f"{first:.1f} s; baseline: os.walk in a fresh python",
    )


FIGURES = [
    Figure(
        "trainwire runs over many runs",
        "s",
        Target("<= 4x walking the directories", "ratio_at_most", 4.0),
        _runs_listing,
    ),
]
