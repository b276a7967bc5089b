"""Step-indexed history of each run for plots and exports, bounded by downsampling.

The twin of the TypeScript package's `SeriesStore`: fed the same events,
both give the same snapshot, byte for byte in canonical JSON. Readers feed it the events
their fold accepted; the writer's journal (and `trainwire journal rebuild`) feed one run's
series the decoded line dicts (`RunSeries.add_line`), which give the same snapshot.

```python
reader = StreamReader()
store = SeriesStore()
for event in reader.feed(chunk):   # the events the fold accepted
    store.add(event)
x, y = store.run("r1").uplot("loss")
steps, values, times = store.run("r1").curve("grad_norm")   # times: seconds since the epoch
```

Series names: the `train.step` fields of `STEP_SERIES` by their own names, each value of a
step's `metrics` as `metrics/<name>`, each evaluation metric as `eval/<split>/<metric>`; the
loss of a step that carries `trial` also as `trial/<n>/loss` (one series per trial, beside the
run's `loss`, which keeps every step as the run state's `loss` does).
"""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from trainwire.contract.clock import parse_timestamp_us
from trainwire.lines.series_buckets import Series
from trainwire.lines.step_batches import not_a_plain_step, segments, stamp_reader

__all__ = [
    "DEFAULT_MAX_MARKERS",
    "DEFAULT_MAX_POINTS",
    "MAX_TRIAL_CURVES",
    "STEP_SERIES",
    "RunSeries",
    "Series",
    "SeriesStore",
]

#: the default number of points one series keeps at most
DEFAULT_MAX_POINTS = 4000
#: the default number of `eval` and `checkpoint` markers a run keeps (the others are counted)
DEFAULT_MAX_MARKERS = 1000
#: the `train.step` fields kept as series of their own name (the epoch and the progress
#: fields are the axes' business, not metrics)
STEP_SERIES = ("loss", "learning_rate", "grad_norm", "samples_per_s", "tokens_per_s", "tokens_seen")

#: a sweep keeps the loss curves of its first this many trials (the run's `loss` keeps every step)
MAX_TRIAL_CURVES = 256
# many trial curves share one chart: each keeps a sixteenth of a series' points
_TRIAL_PREFIX = "trial/"


def _max_points_of(name: str, max_points: int) -> int:
    return max(4, max_points // 16) if name.startswith(_TRIAL_PREFIX) else max_points


# Restarts, stops and the end are few by nature; evals and checkpoints may be many.
_BOUNDED_MARKERS = frozenset({"eval", "checkpoint"})


def _in_trial(label: str, event: Any) -> str:
    """A marker's label with the trial it belongs to, in a search: `validation, trial 3`."""
    trial = getattr(event, "trial", None)
    return label if trial is None else f"{label}, trial {trial}"


class RunSeries:
    """The history of one run: its step fields, step metrics (`metrics/<name>`), each trial's
    loss (`trial/<n>/loss`), eval metrics (`eval/<split>/<metric>`) and markers, each point and
    marker with its time."""

    def __init__(self, run_id: str, max_points: int, max_markers: int, snapshot: dict[str, Any] | None = None) -> None:
        self.run_id = run_id
        self.max_points = max_points
        self.max_markers = max_markers
        self.attempt = 1
        self.last_step: int | None = None
        self.restarts: list[list[int]] = []
        self.series: dict[str, Series] = {}
        self.markers: list[dict[str, Any]] = []
        self.dropped_markers = 0
        if snapshot is not None:
            self.attempt = snapshot["attempt"]
            self.last_step = snapshot["last_step"]
            self.restarts = copy.deepcopy(snapshot["restarts"])
            saved = snapshot["series"]
            # a canonical snapshot sorts its keys: the order of first value is found again
            ordered = sorted(saved, key=lambda name: _first_appearance(name, saved[name]))
            self.series = {name: Series(_max_points_of(name, max_points), saved[name]) for name in ordered}
            self.markers = copy.deepcopy(snapshot["markers"])
            self.dropped_markers = snapshot["dropped_markers"]
        self._bounded_markers = sum(1 for marker in self.markers if marker["kind"] in _BOUNDED_MARKERS)
        self._trial_curves = sum(1 for name in self.series if name.startswith(_TRIAL_PREFIX))

    def names(self) -> list[str]:
        """The series names, in order of first value."""
        return list(self.series)

    def uplot(self, name: str) -> tuple[list[int], list[float | None]]:
        """One series as uPlot data on the step axis: `curve` without the times."""
        steps, values, _times = self.curve(name)
        return steps, values

    def curve(self, name: str) -> tuple[list[int], list[float | None], list[float]]:
        """One series as steps, values and times (seconds since the epoch): steps ascend, a
        `None` value at each restart breaks the line.

        A restart resumes at an earlier step: the abandoned attempt's points from that step
        on are left out, so the line is not drawn back in time. The break takes the time of
        the first point after it, so the times ascend too. Within an attempt, a step that goes
        back (after a rollback) replaces the points from that step on, unbroken.
        """
        x: list[int] = []
        y: list[float | None] = []
        t: list[float] = []
        resume_step = dict((attempt, step) for attempt, step in self.restarts)
        attempt: int | None = None
        series = self.series.get(name)
        for point_attempt, step, value, time_us in series.points() if series is not None else []:
            time_s = time_us / 1_000_000
            if attempt is not None and point_attempt != attempt:
                resume = resume_step.get(point_attempt, step)
                while x and x[-1] >= resume:
                    x.pop()
                    y.pop()
                    t.pop()
                x.append(resume)
                y.append(None)
                t.append(time_s)
            else:
                while x and x[-1] >= step:  # a rollback: the abandoned steps are left out
                    x.pop()
                    y.pop()
                    t.pop()
            attempt = point_attempt
            x.append(step)
            y.append(value)
            t.append(time_s)
        return x, y, t

    def add(self, event: Any) -> None:
        """Take one event the run-state fold accepted."""
        add = _ADD.get(event.event)
        if add is not None:
            add(self, event)

    def add_line(self, line: Mapping[str, Any]) -> None:
        """Take one decoded line (a dict) of this run, as `add` takes its event."""
        kind = line.get("event")
        if kind == "train.step":  # the writer's journal folds every step: no view object for it
            self._step_fields(line["step"], line["ts"], line.get, line.get("metrics"))
            return
        add = _ADD.get(kind)  # type: ignore[arg-type]
        if add is not None:
            add(self, _LineView(line))

    def add_lines(self, lines: Sequence[Mapping[str, Any]]) -> None:
        """`add_line` of each line in turn; the plain steps between two other lines (no
        metrics, no trial: what a training loop writes) a series at a time."""
        for plain, part in segments(lines, not_a_plain_step):
            if plain:
                self._plain_steps(part)
            else:
                for line in part:
                    self.add_line(line)

    def _plain_steps(self, lines: Sequence[Mapping[str, Any]]) -> None:
        steps = [line["step"] for line in lines]
        stamps = [line["ts"] for line in lines]
        fields = set().union(*lines)  # a field no line has makes no column
        columns: list[tuple[int, int, str, list[Any]]] = []
        for order, name in enumerate(STEP_SERIES):
            if name not in fields:
                continue
            values = [line.get(name) for line in lines]
            first = next(
                (index for index, value in enumerate(values) if value is not None and value - value == 0.0), None
            )
            if first is not None:
                columns.append((first, order, name, values))
        time_us = stamp_reader()
        for _first, _order, name, values in sorted(columns):  # new series in the order a line at a time makes them
            series = self.series.get(name)
            if series is None:
                series = self.series[name] = Series(self.max_points)
            series.extend(self.attempt, steps, values, stamps, time_us)
        self.last_step = steps[-1]

    def _add_step(self, event: Any) -> None:
        self._step_fields(event.step, event.ts, functools.partial(getattr, event), event.metrics)

    def _step_fields(self, step: int, ts: str, field: Callable[[str], Any], metrics: Any) -> None:
        """A step's points: each of `STEP_SERIES` `field` gives, its metrics and its trial's loss."""
        self.last_step = step
        time_us = parse_timestamp_us(ts)
        for name in STEP_SERIES:
            value = field(name)
            if value is not None:
                self._point(name, step, value, time_us)
        if metrics:
            self._points("metrics/", metrics, step, time_us)
        trial = field("trial")
        if trial is not None:
            loss = field("loss")
            if loss is not None:  # a sweep's curves overlaid, trial by trial
                self._trial_point(f"{_TRIAL_PREFIX}{trial}/loss", step, loss, time_us)

    def _add_epoch(self, event: Any) -> None:
        self.last_step = event.step

    def _add_restart(self, event: Any) -> None:
        self.attempt = event.attempt
        self.last_step = event.step
        self.restarts.append([event.attempt, event.step])
        self._marker("restart", event.step, event.reason, event.ts)

    def _add_rollback(self, event: Any) -> None:
        # the same attempt goes on from an earlier step: its points go back along the axis
        self.last_step = event.step
        self._marker("rollback", event.step, event.reason, event.ts)

    def _add_eval(self, event: Any) -> None:
        self._points(f"eval/{event.split}/", event.metrics, event.step, parse_timestamp_us(event.ts))
        self._marker("eval", event.step, _in_trial(event.split, event), event.ts)

    def _add_checkpoint(self, event: Any) -> None:
        self._marker("checkpoint", event.step, _in_trial(event.reason, event), event.ts)

    def _add_stop(self, event: Any) -> None:
        self._marker("stop", self.last_step, event.source, event.ts)

    def _add_finished(self, event: Any) -> None:
        step = event.step if event.step is not None else self.last_step
        self._marker("finished", step, event.status, event.ts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "attempt": self.attempt,
            "last_step": self.last_step,
            "restarts": copy.deepcopy(self.restarts),
            "series": {name: values.to_dict() for name, values in self.series.items()},
            "markers": copy.deepcopy(self.markers),
            "dropped_markers": self.dropped_markers,
        }

    def _point(self, name: str, step: int, value: float, time_us: int) -> None:
        if value - value != 0.0:  # NaN or an infinity (a writer's own dict): a reader reads null, no point
            return
        series = self.series.get(name)
        if series is None:
            series = self.series[name] = Series(self.max_points)
        series.add(self.attempt, step, value, time_us)

    def _trial_point(self, name: str, step: int, value: float, time_us: int) -> None:
        if value - value != 0.0:  # as `_point`
            return
        series = self.series.get(name)
        if series is None:
            if self._trial_curves >= MAX_TRIAL_CURVES:
                return
            self._trial_curves += 1
            series = self.series[name] = Series(_max_points_of(name, self.max_points))
        series.add(self.attempt, step, value, time_us)

    def _points(self, prefix: str, metrics: dict[str, float | None], step: int, time_us: int) -> None:
        # sorted names: the order of first appearance is the same in every language
        for metric in sorted(metrics, key=_utf16_key):
            value = metrics[metric]
            if value is not None:
                self._point(prefix + metric, step, value, time_us)

    def _marker(self, kind: str, step: int | None, label: str | None, ts: str) -> None:
        if kind in _BOUNDED_MARKERS:
            if self._bounded_markers >= self.max_markers:
                self.dropped_markers += 1
                return
            self._bounded_markers += 1
        marker = {
            "kind": kind,
            "step": step,
            "attempt": self.attempt,
            "label": label,
            "time_us": parse_timestamp_us(ts),
        }
        self.markers.append(marker)


class _LineView:
    """A line dict read as its event: a field it leaves out reads as None, as in the model."""

    __slots__ = ("_line",)

    def __init__(self, line: Mapping[str, Any]) -> None:
        self._line = line

    def __getattr__(self, name: str) -> Any:
        value = self._line.get(name)
        if name == "metrics" and value is None:
            return {}
        return value


#: every event -> what it adds to a run's series; None: nothing (a test requires every event
#: of the contract here, as `assertNever` does in the TypeScript series store)
_ADD: dict[str, Callable[[RunSeries, Any], None] | None] = {
    "run.started": None,
    "run.heartbeat": None,
    "phase.progress": None,
    "train.rolled_back": RunSeries._add_rollback,
    "phase.started": None,
    "phase.ended": None,
    "train.step": RunSeries._add_step,
    "train.epoch": RunSeries._add_epoch,
    "train.restarted": RunSeries._add_restart,
    "eval.completed": RunSeries._add_eval,
    "checkpoint.saved": RunSeries._add_checkpoint,
    "trial.started": None,
    "trial.ended": None,
    "stop.requested": RunSeries._add_stop,
    "run.finished": RunSeries._add_finished,
}


class SeriesStore:
    """The step-indexed history of every run, fed the events a `RunStateFold` accepted.

    Memory stays bounded: a series keeps at most `max_points` points however long the run.
    `to_dict()` is JSON-serialisable; `SeriesStore.from_dict` goes on from it.
    """

    def __init__(self, *, max_points: int = DEFAULT_MAX_POINTS, max_markers: int = DEFAULT_MAX_MARKERS) -> None:
        self.max_points = max_points
        self.max_markers = max_markers
        self.runs: dict[str, RunSeries] = {}

    @classmethod
    def from_dict(cls, snapshot: dict[str, Any]) -> SeriesStore:
        store = cls(max_points=snapshot["max_points"], max_markers=snapshot["max_markers"])
        for run in snapshot["runs"]:
            store.runs[run["run_id"]] = RunSeries(run["run_id"], store.max_points, store.max_markers, run)
        return store

    def add(self, event: Any) -> None:
        """Take one event the fold accepted (a dropped one would rewrite history)."""
        run = self.runs.get(event.run_id)
        if run is None:
            run = self.runs[event.run_id] = RunSeries(event.run_id, self.max_points, self.max_markers)
        run.add(event)

    def extend(self, events: Any) -> None:
        """Take the events `StreamReader.feed` returned."""
        for event in events:
            self.add(event)

    def run(self, run_id: str) -> RunSeries | None:
        return self.runs.get(run_id)

    def to_dict(self) -> dict[str, Any]:
        return {
            "max_points": self.max_points,
            "max_markers": self.max_markers,
            "runs": [run.to_dict() for run in self.runs.values()],
        }


def _first_appearance(name: str, saved: Mapping[str, Any]) -> tuple[float, int, int, bytes]:
    """Where series `name` took its first value: the time and step of its first point (a
    bucket keeps its first point through every merge), then its place within one line (the
    step fields in `STEP_SERIES` order, step metrics, the trial's loss, evaluation metrics, each
    by name)."""
    if not saved["buckets"]:
        return math.inf, 0, 0, _utf16_key(name)  # never saved: a series has a point
    _index, step, _value, time_us = saved["buckets"][0][2]
    if name in STEP_SERIES:
        return time_us, step, STEP_SERIES.index(name), b""
    return time_us, step, len(STEP_SERIES) + _LATER_PLACES.get(name.split("/", 1)[0], 0), _utf16_key(name)


# after the step fields, in the order a step and then an evaluation add them
_LATER_PLACES = {"metrics": 0, "trial": 1, "eval": 2}


def _utf16_key(name: str) -> bytes:
    # JavaScript sorts strings by UTF-16 code units
    return name.encode("utf-16-be")
