"""`trainwire plot`: loss, learning rate and eval curves of runs, drawn into a file.

HTML pages draw with uPlot, the dashboard's chart library, embedded whole (the page works
offline); PNG and SVG are drawn with matplotlib (the `plot` extra). Both draw the same
`chart_specs`: one chart for the losses (training and eval), one for the learning rate and
one per other eval metric, every run overlaid, restarts and checkpoints marked.

The series come from `load_series`, a small private store until the reader has its own:
swap that one function for the reader's series store when it lands.
"""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from trainwire.cli.tail import read_chunks, stream_files
from trainwire.reader.state import StreamReader

__all__ = [
    "FORMATS",
    "PlotUnavailable",
    "RunSeries",
    "SeriesCollector",
    "chart_specs",
    "format_of",
    "load_series",
    "render_html",
    "stream_files",
    "write_plot",
]

FORMATS = (".html", ".png", ".svg")
#: points kept per curve; past it, every other point is dropped (the last one stays)
MAX_POINTS = 2000


class PlotUnavailable(Exception):
    """The format asked for needs a library that is not installed."""


@dataclass
class RunSeries:
    """The curves of one run: values by step, and the steps where it restarted or saved."""

    run_id: str
    status: str = "running"
    #: curve name -> {step: value}; "loss", "learning_rate", "<split> <metric>" for evals
    curves: dict[str, dict[int, float]] = field(default_factory=dict)
    restarts: list[dict[str, Any]] = field(default_factory=list)
    checkpoints: list[dict[str, Any]] = field(default_factory=list)

    def add_point(self, curve: str, step: int, value: float | None) -> None:
        if value is None or not math.isfinite(value):
            return
        points = self.curves.setdefault(curve, {})
        points.pop(step, None)  # a restarted attempt redoes steps: its value replaces the old one
        points[step] = value
        if len(points) > MAX_POINTS:
            steps = sorted(points)
            for dropped in steps[-2::-2][: len(steps) // 2]:
                del points[dropped]

    def points(self, curve: str) -> list[list[float]]:
        return [[step, value] for step, value in sorted(self.curves.get(curve, {}).items())]


class SeriesCollector:
    """Turns events into `RunSeries`, one per run in order of appearance; feed it as the stream grows."""

    def __init__(self) -> None:
        self.runs: dict[str, RunSeries] = {}

    def add(self, events: Iterable[Any]) -> None:
        for event in events:
            series = self.runs.setdefault(event.run_id, RunSeries(event.run_id))
            name = event.event
            if name == "train.step":
                series.add_point("loss", event.step, event.loss)
                series.add_point("learning_rate", event.step, event.learning_rate)
            elif name == "eval.completed":
                for metric, value in event.metrics.items():
                    series.add_point(f"{event.split} {metric}", event.step, value)
            elif name == "train.restarted":
                series.restarts.append({"step": event.step, "label": f"restart ({event.reason})"})
            elif name == "checkpoint.saved":
                series.checkpoints.append({"step": event.step, "label": f"checkpoint {event.path}"})
            elif name == "run.finished":
                series.status = event.status


def load_series(path: str | Path) -> list[RunSeries]:
    """The series of every run in the stream file at `path`."""
    reader = StreamReader()
    collector = SeriesCollector()
    for chunk in read_chunks(Path(path)):
        collector.add(reader.feed(chunk))
    reader.finish()
    return list(collector.runs.values())


def chart_specs(runs: Sequence[RunSeries]) -> list[dict[str, Any]]:
    """The charts to draw, as plain data shared by the HTML page and matplotlib."""
    eval_curves = sorted({curve for run in runs for curve in run.curves if curve not in ("loss", "learning_rate")})
    metrics = sorted({curve.split(" ", 1)[1] for curve in eval_curves} - {"loss"})
    groups = [("loss", ["loss"] + [c for c in eval_curves if c.endswith(" loss")]), ("learning rate", ["learning_rate"])]
    groups += [(metric, [c for c in eval_curves if c.split(" ", 1)[1] == metric]) for metric in metrics]
    charts = []
    for title, curves in groups:
        series = [
            {"label": f"{run.run_id} {curve}", "run": index, "dashed": curve != curves[0], "points": run.points(curve)}
            for curve in curves
            for index, run in enumerate(runs)
            if run.curves.get(curve)
        ]
        if not series:
            continue
        markers = [
            {"run": index, "kind": kind, **marker}
            for index, run in enumerate(runs)
            for kind, found in (("restart", run.restarts), ("checkpoint", run.checkpoints))
            for marker in found
        ]
        charts.append({"title": title, "series": series, "markers": markers})
    return charts


def format_of(path: Path) -> str | None:
    suffix = path.suffix.lower()
    return "html" if suffix in (".html", ".htm") else suffix[1:] if suffix in FORMATS else None


def write_plot(paths: Sequence[Path], out: Path) -> None:
    """Draw the runs of every stream in `paths` into `out` (format from its suffix)."""
    runs = [series for path in paths for series in load_series(path)]
    kind = format_of(out)
    if kind == "html":
        out.write_text(render_html(runs, title=_title(runs)), "utf-8")
    elif kind in ("png", "svg"):
        _render_image(runs, out, kind)
    else:
        raise ValueError(f"{out}: give a file ending in {', '.join(FORMATS)}")


def render_html(runs: Sequence[RunSeries], *, title: str = "trainwire plot") -> str:
    """A self-contained page: uPlot, its stylesheet, the chart code and the data, all inline."""
    assets = resources.files("trainwire.cli").joinpath("assets")
    data = {"runs": [{"run_id": run.run_id, "status": run.status} for run in runs], "charts": chart_specs(runs)}
    parts = {
        "title": html.escape(title),
        "uplot_css": assets.joinpath("vendor").joinpath("uPlot.min.css").read_text("utf-8"),
        "uplot_js": _inline_script(assets.joinpath("vendor").joinpath("uPlot.iife.min.js").read_text("utf-8")),
        "plot_js": _inline_script(assets.joinpath("plot.js").read_text("utf-8")),
        "data": _inline_script(json.dumps(data, ensure_ascii=False, allow_nan=False)),
    }
    # one pass, so that nothing substituted is read again as a placeholder
    return re.sub(r"\{\{(\w+)\}\}", lambda match: parts[match.group(1)], assets.joinpath("plot.html").read_text("utf-8"))


def _inline_script(text: str) -> str:
    # `</script>` (any case) inside a script element would end it early
    return text.replace("</", "<\\/")


def _title(runs: Sequence[RunSeries]) -> str:
    return "trainwire plot: " + (", ".join(run.run_id for run in runs) or "no runs")


_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")


def _render_image(runs: Sequence[RunSeries], out: Path, kind: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display needed: files only
        import matplotlib.pyplot as pyplot
    except ImportError:
        raise PlotUnavailable(f"{out}: PNG and SVG need matplotlib: pip install 'trainwire[plot]' (or write .html)") from None
    charts = chart_specs(runs) or [{"title": "no points", "series": [], "markers": []}]
    figure, axes = pyplot.subplots(len(charts), 1, figsize=(9, 3 * len(charts)), squeeze=False)
    try:
        for axis, chart in zip(axes[:, 0], charts):
            for series in chart["series"]:
                steps = [point[0] for point in series["points"]]
                values = [point[1] for point in series["points"]]
                colour = _COLOURS[series["run"] % len(_COLOURS)]
                axis.plot(steps, values, label=series["label"], color=colour, linestyle="--" if series["dashed"] else "-", linewidth=1.2)
            for marker in chart["markers"]:
                colour = _COLOURS[marker["run"] % len(_COLOURS)]
                axis.axvline(marker["step"], color=colour, linestyle=":" if marker["kind"] == "checkpoint" else "-.", linewidth=0.8, alpha=0.7)
            axis.set_title(chart["title"])
            axis.set_xlabel("step")
            if chart["series"]:
                axis.legend(fontsize="small")
        figure.suptitle(_title(runs))
        figure.tight_layout()
        figure.savefig(out, format=kind)
    finally:
        pyplot.close(figure)
