"""Figures on a real tiny `Trainer` run: the callback's overhead and the stop latency (one child process)."""

from __future__ import annotations

import json
from typing import Any

from context import BENCH_DIR, PYTHON, Context, run_child
from records import Figure, Measurement, Target, median, round_ratios

__all__ = ["FIGURES"]


def _results(ctx: Context) -> dict[str, Any]:
    def measure() -> dict[str, Any]:
        scale = ctx.scale
        args = [scale.trainer_steps, scale.trainer_pairs, scale.stop_repeats, ctx.scratch_dir("trainer")]
        done = run_child([PYTHON, str(BENCH_DIR / "trainer_child.py"), *map(str, args)], timeout=600)
        return json.loads(done.stdout.strip().splitlines()[-1])

    return ctx.once("trainer", measure)


def _overhead(ctx: Context) -> Measurement:
    results = _results(ctx)
    (wall_with, cpu_with), (wall_without, cpu_without) = (
        [median([run[part] for run in results[side]]) for part in (0, 1)] for side in ("with", "without")
    )
    per_step_ms = (wall_with - wall_without) / ctx.scale.trainer_steps * 1e3
    walls = [[run[0] for run in results[side]] for side in ("with", "without")]
    return Measurement(
        wall_with,
        wall_without,
        rounds=round_ratios(*walls),
        notes=f"{ctx.scale.trainer_steps} steps, logging_steps=1, {len(results['with'])} interleaved pairs; "
        f"{per_step_ms:+.2f} ms per step (one-time costs included); CPU time ratio {cpu_with / cpu_without:.3f}",
    )


def _stop_latency(ctx: Context) -> Measurement:
    stops = _results(ctx)["stops"]
    worst = max(stops, key=lambda stop: stop["latency_s"] - stop["step_s"])
    step_s = median([stop["step_s"] for stop in stops])
    return Measurement(
        worst["latency_s"],
        step_s,
        ratio=worst["latency_s"] / (1.0 + worst["step_s"]),
        notes=f"worst of {len(stops)} stops (median {median([s['latency_s'] for s in stops]):.3f} s); "
        "includes the stop checkpoint; ratio = latency / (1 s + step)",
    )


FIGURES = [
    Figure(
        "callback overhead, tiny Trainer",
        "s",
        Target("<= 1.02x without the callback", "ratio_at_most", 1.02),
        _overhead,
    ),
    Figure(
        "stop latency, control file -> loop exit", "s", Target("<= 1 s + one step", "ratio_at_most", 1.0), _stop_latency
    ),
]
