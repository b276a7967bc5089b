"""`trainwire runs` over many run directories against walking the same directories.

Both sides are whole `python` processes, alternated: the figure is how much reading the
summaries and stream tails adds to finding the runs.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from context import PYTHON, Context, run_child
from records import Figure, Measurement, Target, median, round_ratios

__all__ = ["FIGURES"]

RUNS_BY_SCALE = {"tiny": 200, "small": 2_000, "full": 10_000}
ROUNDS = 5
_WALK = "import os, sys; print(sum('progress.jsonl' in files for _, _, files in os.walk(sys.argv[1])))"


def _make_runs(root: Path, count: int) -> None:
    """`count` finished runs written by the real emitter once, then copied with new ids."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python" / "src"))
    from trainwire import Run
    from trainwire.contract.layout import SUMMARY_FILE, run_journal_dir

    template = root / "template"
    with Run(template, run_id="template-run", step_interval_s=0, heartbeat_interval_s=None) as run:
        run.start(total_steps=40, config={"lr": 3e-4, "batch_size": 8}, provenance=False)
        for step in range(1, 41):
            run.step(step, loss=2.0 / step, learning_rate=3e-4)
    stream = (template / "progress.jsonl").read_text()
    summary = (run_journal_dir(template, "template-run") / SUMMARY_FILE).read_text()
    for index in range(count):
        directory = root / "runs" / f"{index // 100:03d}" / f"run-{index:05d}"
        directory.mkdir(parents=True)
        run_id = f"run-{index:05d}"
        (directory / "progress.jsonl").write_text(stream.replace("template-run", run_id))
        journal = run_journal_dir(directory, run_id)
        journal.mkdir(parents=True)
        (journal / SUMMARY_FILE).write_text(summary.replace("template-run", run_id))


def _runs_listing(ctx: Context) -> Measurement:
    count = RUNS_BY_SCALE.get(ctx.scale.name, 10_000)
    root = ctx.scratch_dir("runs")
    _make_runs(root, count)
    runs_dir = str(root / "runs")
    listed: list[float] = []
    walked: list[float] = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        done = run_child([PYTHON, "-m", "trainwire", "runs", runs_dir, "--json"], timeout=600)
        listed.append(time.perf_counter() - started)
        if len(json.loads(done.stdout)) != count:
            raise RuntimeError(f"trainwire runs listed {len(json.loads(done.stdout))} of {count} runs")
        started = time.perf_counter()
        run_child([PYTHON, "-c", _WALK, runs_dir], timeout=600)
        walked.append(time.perf_counter() - started)
    return Measurement(
        median(listed),
        median(walked),
        rounds=round_ratios(listed, walked),
        notes=f"{count} runs; baseline: os.walk in a fresh python",
    )


FIGURES = [
    Figure(
        "trainwire runs over many runs",
        "s",
        Target("<= 10x walking the directories", "ratio_at_most", 10.0),
        _runs_listing,
    ),
]
