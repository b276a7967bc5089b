"""The dashboard opening a big run in Chromium: the first chart, and the page's main thread
while the stream loads (decoded in the page's worker)."""

from __future__ import annotations

from typing import Any

from context import Context
from records import Figure, Measurement, Target
from scale import MB
from served import open_page, run_directory, serving

__all__ = ["FIGURES"]

#: the stream the page opens (or the scale's large stream when smaller)
OPEN_BYTES = 200 * MB


def _open_in_chromium(ctx: Context) -> dict[str, Any]:
    def measure() -> dict[str, Any]:
        stream = ctx.stream(min(OPEN_BYTES, ctx.scale.large_bytes))
        directory = run_directory(stream, ctx.scratch_dir("page") / "big-run")
        with serving(directory) as served:
            result = open_page(served, served.key, stream.stat().st_size)
        return {**result, "mb": stream.stat().st_size / MB}

    return ctx.once("dashboard-page-open", measure)


def _notes(result: dict[str, Any]) -> str:
    return (
        f"{result['mb']:.0f} MB stream read in {result['loaded_s']:.1f} s; {result['long_tasks']} long tasks, "
        f"longest 50 ms timer gap {result['longest_timer_gap_ms']:.0f} ms; the longest tasks [start, ms]: "
        f"{result['longest_tasks']}"
    )


def _first_chart(ctx: Context) -> Measurement:
    result = _open_in_chromium(ctx)
    return Measurement(result["first_chart_s"], notes=_notes(result))


def _longest_task(ctx: Context) -> Measurement:
    result = _open_in_chromium(ctx)
    return Measurement(result["longest_task_ms"], notes=_notes(result))


FIGURES = [
    Figure(
        "dashboard: first chart of a 200 MB stream (Chromium)",
        "s",
        Target("<= 1 s", "value_at_most", 1.0),
        _first_chart,
    ),
    Figure(
        "dashboard: longest main-thread task while a 200 MB stream loads",
        "ms",
        Target("<= 100 ms", "value_at_most", 100.0),
        _longest_task,
    ),
]
