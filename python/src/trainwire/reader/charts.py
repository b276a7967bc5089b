"""The charts of one or more runs, as the chart specification groups their series.

The twin of the TypeScript package's `chartList`: the dashboard and the
HTML plot draw its list, the PNG/SVG plot draws this one, and for the same runs both are
the same value (a cross-language test compares them in canonical JSON). The rules live in
charts/charts.json, generated into `trainwire._generated.charts`.

```python
charts = chart_list([("r1", store.run("r1"))])
[chart["title"] for chart in charts]   # ['loss', 'learning rate', 'accuracy']
```
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from trainwire._generated.charts import CHART_PATTERNS, CHART_SPEC
from trainwire.reader.series import RunSeries

__all__ = [
    "CHART_SPEC",
    "MARKER_STYLES",
    "TRIALS_KIND",
    "chart_list",
    "chart_of",
    "drawn_names",
    "marker_colour",
    "series_label",
]

#: the kind of the chart of a sweep's per-trial curves (charts/charts.json)
TRIALS_KIND = "trials"

_KIND_ORDER = {entry["kind"]: index for index, entry in enumerate(CHART_SPEC["kinds"])}
# compiled by the generator as JavaScript reads them, so a name with a line break lands alike
_RULES = list(zip(CHART_PATTERNS, CHART_SPEC["charts"], strict=False))
_SPARSE = CHART_PATTERNS[-1]
#: how each marker kind is drawn, by kind; a marker of a kind not listed is not drawn
MARKER_STYLES: dict[str, dict[str, Any]] = {marker["kind"]: marker for marker in CHART_SPEC["markers"]}


def _title(template: str, match: re.Match[str]) -> str:
    """The chart's title: `$1` in the rule's title is the rule's first group."""
    return re.sub(r"\$(\d)", lambda number: match.group(int(number.group(1))) or "", template)


def chart_of(name: str) -> dict[str, Any]:
    """The chart a series goes on: the first rule whose pattern matches its name (the last matches all)."""
    for pattern, rule in _RULES:
        match = pattern.search(name)
        if match is not None:
            title = _title(rule["title"], match)
            return {
                "title": title,
                "kind": rule["kind"],
                "smoothing": rule["smoothing"],
                "log_scale": rule["log_scale"],
            }
    raise ValueError(f"no chart takes {name!r}: the specification's last rule must match every name")


def series_label(name: str) -> str:
    """A series name as people read it: `eval/<split>/<metric>` as `eval loss`, `test accuracy`;
    `trial/<n>/loss` as `trial <n>`; `metrics/<name>` as `<name>`."""
    parts = name.split("/")
    if len(parts) == 3 and parts[0] == "eval":
        return f"{parts[1]} {parts[2]}"
    if len(parts) == 3 and parts[0] == "trial" and parts[2] == "loss":
        return f"trial {parts[1]}"
    return name[len("metrics/") :] if name.startswith("metrics/") else name


def marker_colour(kind: str, label: str | None) -> str:
    """A drawn marker's colour: by its label where the style lists it (the end by the final status)."""
    style = MARKER_STYLES[kind]
    colour: str = style.get("label_colours", {}).get(label, style["colour"])
    return colour


def chart_list(runs: Sequence[tuple[str, RunSeries]]) -> list[dict[str, Any]]:
    """The charts of `runs` (run id, history): each with its title, kind, whether smoothing and a
    log scale apply, its curves (name, label, run, sparse, steps, values with None where a
    restart breaks the line, times in seconds since the epoch) and the drawn markers of the
    runs on it (with their time and colour). Charts come in the order of their kinds, then of
    first appearance; a label starts with the run id when runs overlay. A run with per-trial
    curves (a sweep) gives those alone: its run-level series put every trial's steps on one
    line (`drawn_names`)."""
    charts: dict[str, dict[str, Any]] = {}
    for run_id, history in runs:
        prefix = f"{run_id} " if len(runs) > 1 else ""
        markers = [_drawn_marker(run_id, marker) for marker in history.markers if marker["kind"] in MARKER_STYLES]
        for name, spec in drawn_names(history):
            steps, values, times = history.curve(name)
            if not steps:
                continue
            chart = charts.setdefault(spec["title"], {**spec, "series": [], "markers": []})
            sparse = _SPARSE.search(name) is not None
            chart["series"].append(
                {
                    "name": name,
                    "label": prefix + series_label(name),
                    "run": run_id,
                    "sparse": sparse,
                    "steps": steps,
                    "values": values,
                    "times": times,
                }
            )
            if not any(marker["run"] == run_id for marker in chart["markers"]):
                chart["markers"].extend(markers)
    return sorted(
        charts.values(), key=lambda chart: _KIND_ORDER[chart["kind"]]
    )  # stable: first appearance within a kind


def drawn_names(history: RunSeries) -> list[tuple[str, dict[str, Any]]]:
    """The run's series drawn, each with its chart: all of them, or only the per-trial curves
    (`TRIALS_KIND`) when it has any, in place of the run-level ones that mix the trials."""
    named = [(name, chart_of(name)) for name in history.names()]
    trials = [(name, spec) for name, spec in named if spec["kind"] == TRIALS_KIND]
    return trials or named


def _drawn_marker(run_id: str, marker: dict[str, Any]) -> dict[str, Any]:
    return {
        "run": run_id,
        "kind": marker["kind"],
        "step": marker["step"],
        "label": marker["label"],
        "time": marker["time_us"] / 1_000_000,
        "colour": marker_colour(marker["kind"], marker["label"]),
    }
