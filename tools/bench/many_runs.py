"""Ten thousand run directories of two weights, for the runs-list figures: finished runs,
and runs killed mid-way (SIGKILL) with a few hundred KB in their step file. Each weight is
written once by the real emitter, then copied with new run ids."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from context import PYTHON, ROOT, Context

__all__ = ["KILLED_KEPT", "RUNS_BY_SCALE", "make_runs", "runs_tree"]

#: how many run directories the runs-list figures list
RUNS_BY_SCALE = {"tiny": 200, "small": 2_000, "full": 10_000}

#: steps of the killed template, each kept in its step file (the throttle keeps them out of the
#: stream); the journal writes them in batches, and the bench kills the run once the step file
#: holds `KILLED_KEPT` of them (~240 KB)
KILLED_STEPS = 1_400
KILLED_KEPT = 1_000
_TEMPLATE_ID = "template-run"

_FINISHED = f"""
import sys
from trainwire import Run
with Run(sys.argv[1], run_id={_TEMPLATE_ID!r}, step_interval_s=0, heartbeat_interval_s=None) as run:
    run.start(total_steps=40, config={{"lr": 3e-4, "batch_size": 8}}, provenance=False)
    for step in range(1, 41):
        run.step(step, loss=2.0 / step, learning_rate=3e-4)
"""

_KILLED = f"""
import os, signal, sys, time
from trainwire import Run
run = Run(sys.argv[1], run_id={_TEMPLATE_ID!r}, step_interval_s=3600, heartbeat_interval_s=None)
run.start(total_steps=100_000, config={{"lr": 3e-4, "batch_size": 8}}, provenance=False)
for step in range(1, {KILLED_STEPS} + 1):
    run.step(step, loss=2.0 / step, learning_rate=3e-4, grad_norm=1.0, samples_per_s=100.0)
print("stepped", flush=True)
time.sleep(600)  # killed by the bench once its step file holds every step
"""


def _template(directory: Path, killed: bool) -> dict[str, bytes]:
    """The files of one run written by the real emitter, by path relative to `directory`."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python" / "src")}
    if not killed:
        subprocess.run([PYTHON, "-c", _FINISHED, str(directory)], env=env, check=True, timeout=120)
    else:
        child = subprocess.Popen([PYTHON, "-c", _KILLED, str(directory)], env=env, stdout=subprocess.PIPE, text=True)
        try:
            assert child.stdout is not None
            child.stdout.readline()
            steps = directory / "runs" / _TEMPLATE_ID / "steps.jsonl"
            deadline = time.monotonic() + 60
            # the journal's thread writes the kept steps in batches: wait until they are all there
            while not steps.exists() or steps.read_bytes().count(b"\n") < KILLED_KEPT:
                if time.monotonic() > deadline:
                    raise RuntimeError("the killed template's step file never held its steps")
                time.sleep(0.05)
        finally:
            child.kill()
            child.wait(timeout=30)
    return {
        str(path.relative_to(directory)): path.read_bytes() for path in sorted(directory.rglob("*")) if path.is_file()
    }


def make_runs(root: Path, count: int) -> Path:
    """`count` run directories under `root/runs` (half finished, half killed), returned."""
    templates = [_template(root / name, killed) for name, killed in (("finished", False), ("killed", True))]
    runs = root / "runs"
    for index in range(count):
        run_id = f"run-{index:05d}"
        directory = runs / f"{index // 100:03d}" / run_id
        for relative, data in templates[index % 2].items():
            target = directory / relative.replace(_TEMPLATE_ID, run_id)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data.replace(_TEMPLATE_ID.encode(), run_id.encode()))
    return runs


def runs_tree(ctx: Context) -> Path:
    """The scale's run directories, written once per bench run; the runs cache of every
    `trainwire` child (`TRAINWIRE_CACHE_DIR`) in the scratch space, not the user's."""

    def generate() -> Path:
        os.environ["TRAINWIRE_CACHE_DIR"] = str(ctx.scratch_dir("runs-cache"))
        return make_runs(ctx.scratch_dir("many-runs"), RUNS_BY_SCALE.get(ctx.scale.name, 10_000))

    return ctx.once("many runs", generate)


if __name__ == "__main__":  # python tools/bench/many_runs.py DIR COUNT: the tree alone, to look at
    sys.exit(print(make_runs(Path(sys.argv[1]), int(sys.argv[2]))))
