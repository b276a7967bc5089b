"""The run summary (schemas/summary/v1): one fold from a run's lines to the journal's
`summary.json`. The writer feeds it the lines it writes; `trainwire journal rebuild` feeds
it the lines it reads, so both give the same document."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from trainwire.contract.files import write_json_atomically
from trainwire.contract.layout import SUMMARY_FILE
from trainwire.contract.status import EXIT_CODES
from trainwire.lines.step_batches import segments
from trainwire.lines.summary_bests import Bests, is_lower_better
from trainwire.lines.summary_fields import peak_memory as _peak_memory
from trainwire.lines.summary_fields import seeds as _seeds

__all__ = ["SummaryBuilder", "is_lower_better", "write_summary"]

SUMMARY_VERSION = 2
#: step fields kept as series; `learning_rate` is tracked but has no best
_STEP_SERIES = ("loss", "learning_rate", "grad_norm")


def _number(value: Any) -> float | None:
    """A finite number as a float (the writer's `5` and a reader's `5.0` are one value), else None."""
    if type(value) is float:  # the common case: one check (inf - inf and nan - nan are nan)
        return value if value - value == 0.0 else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


class SummaryBuilder:
    """Folds the lines of one stream into the summary of its latest run.

    Lines are the decoded JSON objects (dicts) of valid lines, in stream order. A
    `run.started` of another run id begins a new latest run (the current one becomes an
    earlier run); other lines of other runs are ignored.
    """

    def __init__(self, earlier_runs: Iterable[str] = (), *, any_line_switches: bool = False) -> None:
        self._earlier: list[str] = list(earlier_runs)
        #: dated entries in the run's notes (`trainwire note`): not in the stream, set by the journal
        self.notes = 0
        #: `completeness` (schemas/verdict): what the run lost, when its writer knows; not in the stream
        self.completeness: Mapping[str, Any] | None = None
        # for pieces of a stream (a head and a tail): the latest run may have started unseen
        self._any_line_switches = any_line_switches
        # a piece known to begin inside a trial, or outside any (`after_save`): (that trial,)
        self._begins_in: tuple[int | None] | None = None
        self._piece_of_search = False  # a piece of a search's stream (`piece_of_search`)
        self._run_id: str | None = None
        #: `ts` of the latest run's last line (liveness; not part of the summary)
        self.last_ts: str | None = None
        self._reset()

    @classmethod
    def after_save(cls, open_trial: int | None) -> SummaryBuilder:
        """A builder of the lines of one run after a save of its journal, at which `open_trial`
        was open (None: no trial): their values count as the whole run's would."""
        builder = cls(any_line_switches=True)
        builder._begins_in = (open_trial,)
        return builder

    @classmethod
    def piece_of_search(cls) -> SummaryBuilder:
        """A builder of a piece of a search's stream (a row's tail) that may begin inside a
        trial: the values before its first trial event are that trial's, no best until its
        `trial.ended` says it succeeded."""
        builder = cls(any_line_switches=True)
        builder._piece_of_search = True
        return builder

    def _reset(self) -> None:
        self._status = "running"
        self._reason: str | None = None
        self._exit_code: int | None = None
        self._started_at: str | None = None
        self._finished_at: str | None = None
        self._duration_s: float | None = None
        self._step: int | None = None
        self._total_steps: int | None = None
        self._attempts = 1
        self._heartbeat_interval_s: float | None = None
        self._checkpoint: str | None = None
        self._finished_checkpoint: str | None = None
        self._process: Mapping[str, Any] | None = None
        # a piece of a stream (`any_line_switches`) may begin inside a trial
        self._bests = Bests(starts_in_trial=self._any_line_switches)
        self._provenance: Mapping[str, Any] = {}
        self._last: dict[str, float] = {}
        self._name: str | None = None
        self._tags: list[str] = []
        self._resumed_from: str | None = None
        self._trial_params: dict[int, Any] = {}
        self._best_trial: Mapping[str, Any] | None = None
        self._tokens: int | None = None
        self._peak_memory: dict[str, int] = {}
        self._plain_steps = True  # the step series' bests follow the name rules (the inline paths)

    @property
    def run_id(self) -> str | None:
        return self._run_id

    def add(self, line: Mapping[str, Any]) -> None:
        run_id = line.get("run_id")
        event = line.get("event")
        if run_id != self._run_id or run_id is None:  # the common case (this run's line) costs one compare
            if not isinstance(run_id, str):
                return
            if self._run_id is not None and event != "run.started" and not self._any_line_switches:
                return  # a line of an earlier (or interleaved) run: the summary is the latest's
            if self._run_id is not None and self._run_id not in self._earlier:
                self._earlier.append(self._run_id)
            if run_id in self._earlier:
                self._earlier.remove(run_id)
            self._run_id = run_id
            self._reset()
            if self._begins_in is not None:  # the piece's first run: its trial is known
                self._bests.open_trial, self._begins_in = self._begins_in[0], None
            self._bests.unseen_in_search, self._piece_of_search = self._piece_of_search, False
        ts = line.get("ts")
        if isinstance(ts, str):
            self.last_ts = ts
        handler = _HANDLERS.get(event) if isinstance(event, str) else None
        if handler is not None:
            handler(self, line)

    def add_lines(self, lines: Sequence[Mapping[str, Any]]) -> None:
        """Folds consecutive lines, as `add` would one by one. Plain `train.step` lines of the
        latest run (ints and finite floats, no metrics: what a training loop writes) between
        two other lines are folded at once; the others go line by line."""
        for plain, part in segments(lines, _not_a_step):
            if not (plain and _fold_steps_at_once(self, part)):
                for line in part:
                    self.add(line)

    def summary(self) -> dict[str, Any] | None:
        """The summary document of the latest run, or None before any line."""
        if self._run_id is None:
            return None
        provenance = self._provenance
        dirty_diff = provenance.get("dirty_diff")
        document: dict[str, Any] = {
            "summary_version": SUMMARY_VERSION,
            "run_id": self._run_id,
            "name": self._name,
            "tags": list(self._tags),
            "status": self._status,
            "reason": self._reason,
            "exit_code": self._exit_code,
            "started_at": self._started_at,
            "finished_at": self._finished_at,
            "duration_s": self._duration_s,
            "step": self._step,
            "total_steps": self._total_steps,
            "attempts": self._attempts,
            "heartbeat_interval_s": self._heartbeat_interval_s,
            "checkpoint": self._finished_checkpoint or self._checkpoint,
            "checkpoint_from": _checkpoint_from(self._finished_checkpoint, self._checkpoint),
            "git_sha": provenance.get("git_sha"),
            "git_dirty": provenance.get("git_dirty"),
            "seed": provenance.get("seed"),
            "dirty_diff": dict(dirty_diff) if isinstance(dirty_diff, Mapping) else None,
            "last": dict(sorted(self._last.items())),
            "best": {name: dict(best) for name, best in sorted(self._bests.counted().items())},
            "earlier_runs": list(self._earlier),
            "objective": self._objective_summary(),
            "resumed_from": self._resumed_from,
            "trials": self._trials_summary(),
            "tokens": self._tokens,
            "peak_memory": dict(sorted(self._peak_memory.items())),
            "seeds": _seeds(provenance),
            "notes": self.notes,
            "last_line_at": self.last_ts,
            "process": dict(self._process) if self._process is not None else None,
            "completeness": dict(self.completeness) if self.completeness is not None else None,
        }
        return document

    def _objective_summary(self) -> dict[str, Any] | None:
        if self._bests.objective is None:
            return None
        name, lower = self._bests.objective
        best = self._bests.counted().get(name)
        # the objective's best is its value and step (`best` names the trial it was reached in)
        shown = {"value": best["value"], "step": best["step"]} if best is not None else None
        return {"name": name, "goal": "min" if lower else "max", "best": shown}

    def _trials_summary(self) -> dict[str, Any] | None:
        if not self._trial_params and self._best_trial is None:
            return None
        best = self._best_trial
        return {
            "count": len(self._trial_params),
            "best": None
            if best is None
            else {
                "trial": best["trial"],
                "metric": best["metric"],
                "value": best["value"],
                "params": self._trial_params.get(best["trial"]),
            },
        }

    # -- series ---------------------------------------------------------------------------

    def _observe(self, name: str, value: Any, step: int | None, *, best: bool, trial: Any = None) -> None:
        number = _number(value)
        if number is None:
            return
        self._last[name] = number
        if best:
            self._bests.observe(name, number, step, trial)

    def _step_to(self, step: Any) -> None:
        if isinstance(step, int) and not isinstance(step, bool):
            self._step = step


#: the step series and whether each has a best (a lower-is-better name)
_STEP_SERIES_BEST = tuple((name, is_lower_better(name)) for name in _STEP_SERIES)


def _run_started(summary: SummaryBuilder, line: Mapping[str, Any]) -> None:
    summary._bests.run_started()
    summary._started_at = line.get("ts")
    total = line.get("total_steps")
    summary._total_steps = total if isinstance(total, int) else None
    interval = line.get("heartbeat_interval_s")
    summary._heartbeat_interval_s = _number(interval)
    provenance = line.get("provenance")
    summary._provenance = provenance if isinstance(provenance, Mapping) else {}
    name, tags = line.get("name"), line.get("tags")
    summary._name = name if isinstance(name, str) else None
    summary._tags = [tag for tag in tags if isinstance(tag, str)] if isinstance(tags, list) else []
    objective = line.get("objective")
    if (
        isinstance(objective, Mapping)
        and isinstance(objective.get("name"), str)
        and objective.get("goal") in ("min", "max")
    ):
        name = objective["name"]
        summary._bests.objective = (name, objective["goal"] == "min")
        # a declared goal for a step series other than the name rule's: the general path
        summary._plain_steps = name not in _STEP_SERIES or is_lower_better(name) == (objective["goal"] == "min")
    process = line.get("process")
    summary._process = process if isinstance(process, Mapping) else None
    resumed = line.get("resumed_from")
    run_id = resumed.get("run_id") if isinstance(resumed, Mapping) else None
    summary._resumed_from = run_id if isinstance(run_id, str) else None


def _checkpoint_from(finished: str | None, saved: str | None) -> str | None:
    """Where the summary's checkpoint comes from (`checkpoint_from`)."""
    return "run.finished" if finished else "checkpoint.saved" if saved else None


def _train_step(summary: SummaryBuilder, line: Mapping[str, Any]) -> None:
    # The per-step path of the writer's journal and of every fold: plain ints and floats
    # take the inline branches; anything else goes the general way (`_step_to`, `_observe`).
    step = line.get("step")
    if type(step) is int:
        summary._step = step
    else:
        summary._step_to(step)
    total = line.get("total_steps")
    if isinstance(total, int):
        summary._total_steps = total
    step = summary._step
    tokens = line.get("tokens_seen")
    if tokens is not None and type(tokens) is int:
        summary._tokens = tokens
    memory = line.get("memory")
    if memory:
        _peak_memory(summary._peak_memory, memory)
    if not summary._plain_steps or summary._bests.open_trial is not None:
        for name in _STEP_SERIES:
            summary._observe(name, line.get(name), step, best=summary._bests.has_best(name))
        _step_metrics(summary, line.get("metrics"), step)
        return
    last, bests = summary._last, summary._bests.best
    for name, best in _STEP_SERIES_BEST:
        value = line.get(name)
        if value is None:
            continue
        if type(value) is not float or value - value != 0.0:  # not a finite float: the general way
            summary._observe(name, value, step, best=best)
            continue
        last[name] = value
        if best:  # a step series with a best is a lower-is-better one
            current = bests.get(name)
            if current is None:
                bests[name] = {"value": value, "step": step}
            elif value < current["value"]:  # updated in place: `summary()` hands out copies
                current["value"], current["step"] = value, step
    _step_metrics(summary, line.get("metrics"), step)


def _step_metrics(summary: SummaryBuilder, metrics: Any, step: int | None) -> None:
    if metrics and isinstance(metrics, Mapping):
        for name, value in metrics.items():
            name = str(name)
            summary._observe(name, value, step, best=summary._bests.has_best(name))


_FLOAT_OR_NONE = frozenset((float, type(None)))
_INT_OR_NONE = frozenset((int, type(None)))
_STR_OR_NONE = frozenset((str, type(None)))


def _not_a_step(line: Mapping[str, Any]) -> bool:
    return line.get("event") != "train.step"


def _fold_steps_at_once(summary: SummaryBuilder, lines: Sequence[Mapping[str, Any]]) -> bool:
    """`_train_step` over a batch, one pass per field in C (comprehensions, `min`, `sum`)
    instead of a Python call per line; False, with nothing changed, when the batch is not
    plain steps of the latest run (then each line goes the general way)."""
    if not lines or summary._run_id is None:
        return False
    if {line.get("run_id") for line in lines} != {summary._run_id} or {line.get("event") for line in lines} != {
        "train.step"
    }:
        return False
    if summary._bests.open_trial is not None or not summary._plain_steps:
        return False  # a trial's values wait for its end (`_observe`)
    fields = set().union(*lines)  # a field no line has needs no pass
    if ("metrics" in fields or "memory" in fields) and any(line.get("metrics") or line.get("memory") for line in lines):
        return False
    steps = [line.get("step") for line in lines]
    stamps = [line.get("ts") for line in lines]
    totals = [line.get("total_steps") for line in lines]
    # a kept step (the step file's) has no `ts`: it was never written
    if (
        set(map(type, steps)) != {int}
        or not set(map(type, stamps)) <= _STR_OR_NONE
        or not set(map(type, totals)) <= _INT_OR_NONE
    ):
        return False
    series: list[tuple[str, bool, list[Any], list[float]]] = []
    for name, best in _STEP_SERIES_BEST:
        if name not in fields:
            continue
        values: list[Any] = [line.get(name) for line in lines]
        if not set(map(type, values)) <= _FLOAT_OR_NONE:
            return False
        numbers: list[float] = [value for value in values if value is not None] if None in values else values
        added = sum(numbers)
        if added - added != 0.0:  # an infinity or NaN among them (or a sum that overflows): line by line
            return False
        series.append((name, best, values, numbers))
    # Checked: now fold. Each field's last value is the last line's; a best is the first minimum.
    written = [stamp for stamp in stamps if stamp is not None] if None in stamps else stamps
    if written:
        summary.last_ts = written[-1]
    summary._step = steps[-1]
    given_tokens = [line.get("tokens_seen") for line in lines] if "tokens_seen" in fields else []
    given_tokens = [tokens for tokens in given_tokens if type(tokens) is int]
    if given_tokens:
        summary._tokens = given_tokens[-1]
    given_totals = [total for total in totals if total is not None]
    if given_totals:
        summary._total_steps = given_totals[-1]
    for name, best, values, numbers in series:
        if not numbers:
            continue
        summary._last[name] = numbers[-1]
        if best:
            lowest = min(numbers)
            current = summary._bests.best.get(name)
            if current is None:
                summary._bests.best[name] = {"value": lowest, "step": steps[values.index(lowest)]}
            elif lowest < current["value"]:
                current["value"], current["step"] = lowest, steps[values.index(lowest)]
    return True


def _train_restarted(summary: SummaryBuilder, line: Mapping[str, Any]) -> None:
    summary._attempts += 1
    summary._step_to(line.get("step"))
    if isinstance(line.get("total_steps"), int):
        summary._total_steps = line["total_steps"]


def _train_rolled_back(summary: SummaryBuilder, line: Mapping[str, Any]) -> None:
    summary._step_to(line.get("step"))  # the same attempt goes on from the step returned to


def _eval_completed(summary: SummaryBuilder, line: Mapping[str, Any]) -> None:
    split = line.get("split") or "eval"
    step = line.get("step")
    metrics = line.get("metrics")
    if isinstance(metrics, Mapping):
        for name, value in metrics.items():
            summary._observe(
                f"{split}/{name}", value, step if isinstance(step, int) else None, best=True, trial=line.get("trial")
            )


def _checkpoint_saved(summary: SummaryBuilder, line: Mapping[str, Any]) -> None:
    path = line.get("path")
    if isinstance(path, str):
        summary._checkpoint = path


def _trial_started(summary: SummaryBuilder, line: Mapping[str, Any]) -> None:
    trial = line.get("trial")
    if isinstance(trial, int):
        params = line.get("params")
        summary._trial_params[trial] = dict(params) if isinstance(params, Mapping) else None
        summary._bests.trial_started(trial)


def _trial_ended(summary: SummaryBuilder, line: Mapping[str, Any]) -> None:
    trial = line.get("trial")
    if isinstance(trial, int):
        summary._bests.trial_ended(trial, succeeded=line.get("status") == "succeeded")
    best = line.get("best")
    if (
        isinstance(best, Mapping)
        and isinstance(best.get("trial"), int)
        and isinstance(best.get("metric"), str)
        and _number(best.get("value")) is not None
    ):
        summary._best_trial = {"trial": best["trial"], "metric": best["metric"], "value": _number(best["value"])}


def _run_finished(summary: SummaryBuilder, line: Mapping[str, Any]) -> None:
    status = line.get("status")
    if isinstance(status, str):
        summary._status = status
        summary._exit_code = line.get("exit_code") if isinstance(line.get("exit_code"), int) else EXIT_CODES.get(status)
    summary._reason = line.get("reason") if isinstance(line.get("reason"), str) else None
    summary._finished_at = line.get("ts")
    summary._bests.run_finished()
    duration = line.get("duration_s")
    summary._duration_s = _number(duration)
    summary._step_to(line.get("step"))
    checkpoint = line.get("checkpoint")
    summary._finished_checkpoint = checkpoint if isinstance(checkpoint, str) else None
    metrics = line.get("metrics")
    if isinstance(metrics, Mapping):
        for name, value in metrics.items():
            summary._observe(str(name), value, summary._step, best=summary._bests.has_best(str(name)))


#: every event -> how it changes the summary; None: the summary does not show it (a test
#: requires every event of the contract here)
_HANDLERS: dict[str, Callable[[SummaryBuilder, Mapping[str, Any]], None] | None] = {
    "run.started": _run_started,
    "run.heartbeat": None,
    "phase.progress": None,
    "train.rolled_back": _train_rolled_back,
    "phase.started": None,
    "phase.ended": None,
    "train.step": _train_step,
    "train.epoch": None,
    "train.restarted": _train_restarted,
    "eval.completed": _eval_completed,
    "checkpoint.saved": _checkpoint_saved,
    "trial.started": _trial_started,
    "trial.ended": _trial_ended,
    "stop.requested": None,
    "run.finished": _run_finished,
}


def write_summary(directory: str | os.PathLike[str], summary: Mapping[str, Any]) -> Path:
    """Writes `summary` to the directory's `summary.json` atomically."""
    target = Path(directory) / SUMMARY_FILE
    write_json_atomically(target, summary, indent=2)
    return target
