"""Cold starts: a fresh interpreter that imports `trainwire.writer.run`, starts a run and writes
its first step, and one that lists runs (`trainwire runs`), each against one that imports `json`.

Each round times both processes, in alternating order, whole (interpreter start-up included,
the same in both). The process runs in a clean git work tree, where a training script
usually is: `run.started` collects its provenance (git, package versions) as it would there.
Modules are loaded compiled, as from an installed package: the children write and read
their bytecode in the scratch directory (`PYTHONPYCACHEPREFIX`), whatever
`PYTHONDONTWRITEBYTECODE` says, and a first run fills it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from context import PYTHON, Context, run_child
from records import Figure, Measurement, Target, median, round_ratios

__all__ = ["FIGURES"]

#: what a training script does first (argv[1]: the run's output directory)
_SUBJECT = (
    "import sys\n"
    "from trainwire.writer.run import Run\n"
    "run = Run(sys.argv[1])\n"
    "run.start(total_steps=100)\n"
    "run.step(1, loss=2.5, learning_rate=5e-05)\n"
)
_BASELINE = "import json"
_MS = 1000


def _work_tree(ctx: Context) -> tuple[Path, str]:
    """A clean git work tree with one commit, or a plain directory when git is missing."""
    directory = ctx.scratch_dir("start-work-tree")
    git = shutil.which("git")
    if git is None:
        return directory, "not a git work tree (git missing)"
    (directory / "train.py").write_text("# a training script\n", encoding="utf-8")
    identity = ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "-c", "commit.gpgsign=false"]
    for args in (["init", "-q"], ["add", "train.py"], [*identity, "commit", "-q", "-m", "a training script"]):
        subprocess.run([git, *args], cwd=directory, check=True, capture_output=True)
    return directory, "a clean git work tree"


def _compiled(ctx: Context) -> dict[str, str]:
    """The children's environment: bytecode cached in the scratch directory."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(ctx.scratch_dir("start-bytecode"))
    return env


def _against_import_json(ctx: Context, subject: Callable[[], list[str]], cwd: Path) -> tuple[list[float], list[float]]:
    """Whole-process times (s) of the command `subject()` gives and of `python -c 'import json'`,
    alternating."""
    env = _compiled(ctx)

    def _timed(args: list[str]) -> float:
        started = time.perf_counter()
        run_child(args, timeout=60, cwd=cwd, env=env)
        return time.perf_counter() - started

    subject_times: list[float] = []
    baseline_times: list[float] = []
    contenders = [(subject_times, subject), (baseline_times, lambda: [PYTHON, "-c", _BASELINE])]
    for _, args in contenders:  # compile the modules, warm the file cache
        _timed(args())
    for round_ in range(ctx.scale.start_rounds):
        for times, args in contenders[round_ % 2 :] + contenders[: round_ % 2]:
            times.append(_timed(args()))
    return subject_times, baseline_times


def _cold_start(ctx: Context) -> Measurement:
    cwd, where = _work_tree(ctx)
    # a directory of its own each time: the run starts where no journal is
    subject, baseline = _against_import_json(
        ctx, lambda: [PYTHON, "-c", _SUBJECT, str(ctx.scratch_dir("start-run"))], cwd
    )
    return Measurement(
        median(subject) * _MS,
        median(baseline) * _MS,
        rounds=round_ratios(subject, baseline),
        notes=f"fresh `python -c`: import trainwire.writer.run, Run(dir).start(), one step; baseline "
        f"`python -c 'import json'`; median of {len(subject)} rounds, in {where}",
    )


def _listing_start(ctx: Context) -> Measurement:
    """`trainwire runs DIR` over a directory of one finished run, a fresh process each time."""
    directory = ctx.scratch_dir("start-listing")
    run_child([PYTHON, "-c", _SUBJECT + "run.finish()\n", str(directory / "out")], timeout=60, cwd=directory)
    subject, baseline = _against_import_json(
        ctx, lambda: [PYTHON, "-m", "trainwire", "runs", str(directory)], directory
    )
    return Measurement(
        median(subject) * _MS,
        median(baseline) * _MS,
        rounds=round_ratios(subject, baseline),
        notes=f"fresh `python -m trainwire runs DIR` over one finished run; baseline `python -c 'import json'`; "
        f"median of {len(subject)} rounds",
    )


FIGURES = [
    Figure(
        "emitter, cold start: import + start() + first step",
        "ms",
        Target("<= 150 ms (ratio to import json reported)", "value_at_most", 150),
        _cold_start,
    ),
    Figure(
        "CLI, cold start: trainwire runs over one run",
        "ms",
        Target("<= 250 ms (ratio to import json reported)", "value_at_most", 250),
        _listing_start,
    ),
]
