"""Opening a run in the dashboard against folding the same stream with the TypeScript reader."""

from __future__ import annotations

from context import Context
from records import Figure, Measurement, Target, median, round_ratios
from scale import MB
from typescript_reader import node_script

__all__ = ["FIGURES"]


def _open(ctx: Context) -> Measurement:
    path = ctx.stream(ctx.scale.reader_bytes)
    result = node_script("dashboard-open.mjs", path, max(5, ctx.scale.reader_rounds))
    return Measurement(
        median(result["ours"]),
        median(result["baseline"]),
        rounds=round_ratios(result["ours"], result["baseline"]),
        notes=f"{path.stat().st_size / MB:.0f} MB stream, {result['points']} chart points kept",
    )


FIGURES = [
    Figure(
        "dashboard: open a run (fold, series, chart data)",
        "s",
        Target("<= 3x the fold alone", "ratio_at_most", 3.0),
        _open,
    ),
]
