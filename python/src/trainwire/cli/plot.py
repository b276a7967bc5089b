"""`trainwire plot`: the charts of runs (curves and markers), drawn into a file.

The curves are the reader's series store (`trainwire.reader.series`), the same history the
dashboard draws, and the charts are the chart specification's (`trainwire.reader.charts`,
from charts/charts.json): which series go on which chart, and how curves and markers look.
An HTML page inlines the series snapshots and the dashboard's own chart code (uPlot, built
from the TypeScript package into `trainwire/serve/static/plot.js`): it looks like the
dashboard and works offline. PNG and SVG are drawn with matplotlib (the `plot` extra) from
`chart_specs`, the same list the HTML page draws; every run overlaid.
"""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from trainwire.contract.clock import now_us
from trainwire.journal.kept_steps import every_line
from trainwire.journal.opening import open_from_snapshots
from trainwire.lines.verdict import status_text
from trainwire.reader.catalog import run_rows
from trainwire.reader.charts import CHART_SPEC, MARKER_STYLES, chart_list
from trainwire.reader.series import RunSeries, SeriesStore
from trainwire.reader.state import StreamReader
from trainwire.reader.targets import stream_files

__all__ = [
    "FORMATS",
    "PlotUnavailable",
    "PlottedRun",
    "chart_specs",
    "format_of",
    "load_runs",
    "render_html",
    "stream_files",
    "write_plot",
]

FORMATS = (".html", ".png", ".svg")


class PlotUnavailable(Exception):
    """The format asked for needs a library that is not installed."""


@dataclass(frozen=True)
class PlottedRun:
    """One run to draw: its id, its status as its verdict words it (`lines.verdict`) and its history."""

    run_id: str
    status: str
    series: RunSeries


def load_runs(path: str | Path) -> list[PlottedRun]:
    """Every run of the stream file at `path`, with its series, in order of appearance: from
    the runs' journal snapshots and the stream past them, else from the whole stream."""
    statuses = _verdict_statuses(Path(path))
    opened = open_from_snapshots(Path(path))
    if opened is not None:
        return [PlottedRun(run.run_id, statuses.get(run.run_id, run.status), run.series) for run in opened.runs]
    reader = StreamReader()
    store = SeriesStore()
    for line in every_line(Path(path), reader):
        run_id = line["run_id"]
        history = store.runs.get(run_id)
        if history is None:
            history = store.runs[run_id] = RunSeries(run_id, store.max_points, store.max_markers)
        history.add_line(line)
    plotted = []
    for run in reader.runs:
        history = store.run(run.run_id)
        if history is not None:
            plotted.append(PlottedRun(run.run_id, statuses.get(run.run_id, run.status), history))
    return plotted


def _verdict_statuses(path: Path) -> dict[str, str]:
    """Each run's status as its verdict words it, judged now (a dead run `stale`, never `running`)."""
    try:
        rows = run_rows(path, now_us())
    except OSError:
        return {}
    return {row["run_id"]: status_text(row["verdict"]) for row in rows}


def chart_specs(runs: Sequence[PlottedRun]) -> list[dict[str, Any]]:
    """The charts to draw, as the dashboard and the HTML page draw them (`chart_list`)."""
    return chart_list([(run.run_id, run.series) for run in runs])


def format_of(path: Path) -> str | None:
    suffix = path.suffix.lower()
    return "html" if suffix in (".html", ".htm") else suffix[1:] if suffix in FORMATS else None


def write_plot(paths: Sequence[Path], out: Path) -> None:
    """Draw the runs of every stream in `paths` into `out` (format from its suffix)."""
    runs = [run for path in paths for run in load_runs(path)]
    kind = format_of(out)
    if kind == "html":
        out.write_text(render_html(runs, title=_title(runs)), "utf-8")
    elif kind in ("png", "svg"):
        _render_image(runs, out, kind)
    else:
        raise ValueError(f"{out}: give a file ending in {', '.join(FORMATS)}")


def render_html(runs: Sequence[PlottedRun], *, title: str = "trainwire plot") -> str:
    """A self-contained page: the dashboard's stylesheet and chart code and the data, inline."""
    static = resources.files("trainwire.serve").joinpath("static")
    try:
        script = static.joinpath("plot.js").read_text("utf-8")
        style = static.joinpath("dashboard.css").read_text("utf-8")
    except FileNotFoundError:
        raise PlotUnavailable(
            "the chart code is not built (from a checkout: make setup); PNG and SVG still work"
        ) from None
    data = {"runs": [{"run_id": run.run_id, "status": run.status, "series": run.series.to_dict()} for run in runs]}
    parts = {
        "title": html.escape(title),
        "style": style,
        "plot_js": _inline_script(script),
        "data": _inline_script(json.dumps(data, ensure_ascii=False, allow_nan=False)),
    }
    template = resources.files("trainwire.cli").joinpath("assets").joinpath("plot.html").read_text("utf-8")
    # one pass, so that nothing substituted is read again as a placeholder
    return re.sub(r"\{\{(\w+)\}\}", lambda match: parts[match.group(1)], template)


def _inline_script(text: str) -> str:
    # `</script>` (any case) inside a script element would end it early
    return text.replace("</", "<\\/")


def _title(runs: Sequence[PlottedRun]) -> str:
    return "trainwire plot: " + (", ".join(run.run_id for run in runs) or "no runs")


def _render_image(runs: Sequence[PlottedRun], out: Path, kind: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display needed: files only
        import matplotlib.pyplot as pyplot
    except ImportError:
        raise PlotUnavailable(
            f"{out}: PNG and SVG need matplotlib: pip install 'trainwire[plot]' (or write .html)"
        ) from None
    charts = chart_specs(runs) or [{"title": "no points", "series": [], "markers": []}]
    colours = CHART_SPEC["series"]["colours"]
    figure, axes = pyplot.subplots(len(charts), 1, figsize=(9, 3 * len(charts)), squeeze=False)
    try:
        for axis, chart in zip(axes[:, 0], charts, strict=False):
            for index, series in enumerate(chart["series"]):
                values = [math.nan if value is None else value for value in series["values"]]  # a gap breaks the line
                dash = CHART_SPEC["series"]["sparse"]["dash"] if series["sparse"] else []
                axis.plot(
                    series["steps"],
                    values,
                    label=series["label"],
                    color=colours[index % len(colours)],
                    linestyle=_line_style(dash),
                    linewidth=CHART_SPEC["series"]["width"],
                )
            for marker in chart["markers"]:
                if marker["step"] is None:
                    continue
                style = MARKER_STYLES[marker["kind"]]
                axis.axvline(
                    marker["step"],
                    color=marker["colour"],  # the end marker by the run's final status
                    linestyle=_line_style(style["dash"]),
                    linewidth=style["width"],
                )
            axis.set_title(chart["title"])
            axis.set_xlabel("step")
            if chart["series"]:
                axis.legend(fontsize="small")
        figure.suptitle(_title(runs))
        figure.tight_layout()
        figure.savefig(out, format=kind)
    finally:
        pyplot.close(figure)


def _line_style(dash: Sequence[float]) -> Any:
    # the specification's dash pattern (on, off, ...), as matplotlib takes one
    return (0, tuple(dash)) if dash else "-"
