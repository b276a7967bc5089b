"""Runs in Jupyter: a small table and a loss chart, as static HTML (no widgets, no server).

- a `RunState` displays as a table (`_repr_html_`);
- `FollowedRun(path)` reads what the stream gained on each display: a table and a chart;
- `watch(path)` keeps one output cell up to date while the run is live, through an IPython
  display handle (`display(..., display_id=True)` then `update`), and returns the last state.

```python
from trainwire.notebook import watch
watch("out/")          # a run directory or a stream file; interrupt the cell to stop watching
```
"""

from __future__ import annotations

import html
import os
import time
from pathlib import Path
from typing import Any

from trainwire.cli.status_line import format_duration, now_us
from trainwire.cli.tail import stream_files, target_run
from trainwire.reader.series import RunSeries, SeriesStore
from trainwire.reader.sources import FileFollower
from trainwire.reader.state import RunState, StreamReader

__all__ = ["FollowedRun", "run_html", "watch"]

_CHART_WIDTH = 360
_CHART_HEIGHT = 120


def run_html(run: RunState, series: RunSeries | None = None, *, stale_after_s: float | None = None) -> str:
    """A table of the run's state, and its loss chart when `series` is given."""
    status = run.status_at(now_us(), stale_after_s)
    rows = [("run", run.run_id), ("status", status)]
    if run.phase:
        rows.append(("phase", run.phase))
    if run.step is not None:
        total = f"/{run.total_steps}" if run.total_steps is not None else ""
        progress = f" ({run.progress:.0%})" if run.progress is not None else ""
        rows.append(("step", f"{run.step}{total}{progress}"))
    if run.loss is not None:
        rows.append(("loss", f"{run.loss:.4g}"))
    if run.learning_rate is not None:
        rows.append(("learning rate", f"{run.learning_rate:.2e}"))
    if run.eta_s is not None and run.finished is None:
        rows.append(("eta", format_duration(run.eta_s)))
    if run.last_eval is not None:
        metrics = ", ".join(
            f"{name} {value:.4g}" for name, value in run.last_eval["metrics"].items() if value is not None
        )
        rows.append((f"eval ({run.last_eval['split']}) at step {run.last_eval['step']}", metrics))
    if run.last_checkpoint is not None:
        rows.append(("checkpoint", f"{run.last_checkpoint['path']} at step {run.last_checkpoint['step']}"))
    if run.restarts:
        rows.append(("restarts", str(len(run.restarts))))
    body = "".join(
        f"<tr><th style='text-align:left'>{html.escape(name)}</th><td style='text-align:left'>{html.escape(value)}</td></tr>"
        for name, value in rows
    )
    table = f"<table class='trainwire-run'>{body}</table>"
    if series is None:
        return table
    return f"<div class='trainwire-run' style='display:flex;gap:1em;align-items:flex-start'>{table}{loss_svg(series)}</div>"


def loss_svg(series: RunSeries) -> str:
    """The loss (solid) and eval loss (dashed) against the step, restarts as red lines: an inline SVG."""
    curves = [
        (name, [(step, value) for step, value in zip(*series.uplot(name)) if value is not None])
        for name in series.names()
        if name == "loss" or name.endswith("/loss")
    ]
    points = [point for _, found in curves for point in found]
    if not points:
        return ""
    low_x, high_x = min(p[0] for p in points), max(p[0] for p in points)
    low_y, high_y = min(p[1] for p in points), max(p[1] for p in points)

    def x(step: float) -> float:
        return 4 + (step - low_x) / ((high_x - low_x) or 1) * (_CHART_WIDTH - 8)

    def y(value: float) -> float:
        return _CHART_HEIGHT - 4 - (value - low_y) / ((high_y - low_y) or 1) * (_CHART_HEIGHT - 8)

    shapes = []
    for marker in series.markers:
        if marker["kind"] == "restart" and marker["step"] is not None:
            shapes.append(
                f"<line x1='{x(marker['step']):.1f}' x2='{x(marker['step']):.1f}' y1='0' y2='{_CHART_HEIGHT}' stroke='#d62728' stroke-dasharray='4 2'/>"
            )
    for name, found in curves:
        path = " ".join(f"{x(step):.1f},{y(value):.1f}" for step, value in found)
        dash = "" if name == "loss" else " stroke-dasharray='5 3'"
        shapes.append(
            f"<polyline fill='none' stroke='#1f77b4' stroke-width='1.5'{dash} points='{path}'><title>{html.escape(name)}</title></polyline>"
        )
    label = html.escape(f"loss {low_y:.4g} to {high_y:.4g}, steps {low_x} to {high_x}")
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{_CHART_WIDTH}' height='{_CHART_HEIGHT}' role='img' aria-label='{label}'"
        f" style='border:1px solid #ddd'>{''.join(shapes)}</svg>"
    )


class FollowedRun:
    """A stream read as it grows: each display (or `refresh()`) reads the new lines.

    `path` is a stream file or a run directory; `run_id` picks a run (default: the last).
    """

    def __init__(
        self, path: str | os.PathLike[str], *, run_id: str | None = None, stale_after_s: float | None = None
    ) -> None:
        self.path = stream_files(Path(path))[0]
        self.run_id = run_id
        self.stale_after_s = stale_after_s
        self._reader = StreamReader()
        self._series = SeriesStore()
        self._chunks = iter(FileFollower(self.path, poll_interval_s=0, on_reset=self._start_over, yield_when_idle=True))

    def refresh(self) -> RunState | None:
        """Read what was appended since the last call; return the run."""
        while chunk := next(self._chunks):
            self._series.extend(self._reader.feed(chunk))
        return self.run

    @property
    def run(self) -> RunState | None:
        return target_run(self._reader, self.run_id)

    @property
    def series(self) -> RunSeries | None:
        run = self.run
        return None if run is None else self._series.run(run.run_id)

    def status(self) -> str | None:
        run = self.run
        return None if run is None else run.status_at(now_us(), self.stale_after_s)

    def close(self) -> None:
        self._chunks.close()  # type: ignore[attr-defined]

    def _start_over(self, reason: str) -> None:
        self._reader = StreamReader()
        self._series = SeriesStore()

    def _repr_html_(self) -> str:
        run = self.refresh()
        if run is None:
            return f"<p>{html.escape(str(self.path))}: no run yet</p>"
        return run_html(run, self.series, stale_after_s=self.stale_after_s)


def watch(
    path: str | os.PathLike[str],
    *,
    run_id: str | None = None,
    interval_s: float = 1.0,
    stale_after_s: float | None = None,
) -> RunState | None:
    """Show the run in this cell's output and update it in place until it finishes or turns stale.

    Interrupting the cell stops watching (the run goes on). Returns the last state seen.
    """
    from IPython.display import HTML, display

    followed = FollowedRun(path, run_id=run_id, stale_after_s=stale_after_s)
    try:
        handle: Any = display(HTML(followed._repr_html_()), display_id=True)  # type: ignore[no-untyped-call]
        while followed.status() in (None, "running"):
            time.sleep(interval_s)
            handle.update(HTML(followed._repr_html_()))  # type: ignore[no-untyped-call]
    except KeyboardInterrupt:
        pass  # the user stopped watching; the run is not affected
    finally:
        followed.close()
    return followed.run
