"""The conformance suite's wall time, every harness, as `make test` runs it."""

from __future__ import annotations

import time

from context import PYTHON, Context, run_child
from records import Figure, Measurement, Target

__all__ = ["FIGURES"]


def _wall_time(ctx: Context) -> Measurement:
    started = time.perf_counter()
    done = run_child([PYTHON, "-m", "trainwire.conformance", "run", "--all"], timeout=300)
    seconds = time.perf_counter() - started
    summary = (done.stdout.strip().splitlines() or [""])[-1][:120]
    return Measurement(seconds, notes=f"`python -m trainwire.conformance run --all`: {summary}")


FIGURES = [
    Figure("conformance suite, all harnesses", "s", Target("< 60 s", "value_at_most", 60.0), _wall_time),
]
