"""The status line of `trainwire tail` on a terminal: as many fields as the width allows.

Each field has a rank; when the line is too wide, the field with the lowest rank goes first
(the rightmost of equal ranks). The step, the ETA, the loss and a phase's per-item progress
are never dropped; a running trial ("trial 7/20, best 0.412 (trial 3)") goes last but one, a cycle after the restarts. Strings
from the stream are made printable first, so a crafted run name cannot drive the terminal.
"""

from __future__ import annotations

import math
import unicodedata
from collections import deque
from dataclasses import dataclass
from typing import Any

from trainwire.contract.clock import parse_timestamp_us
from trainwire.contract.humanize import format_duration, format_rate
from trainwire.contract.printable import printable
from trainwire.lines.verdict import params_text as verdict_params_text
from trainwire.reader.state import RunState

__all__ = [
    "Field",
    "RunTrend",
    "cycle_text",
    "fit",
    "item_progress_text",
    "params_text",
    "printable",
    "render_status",
    "status_fields",
    "trial_text",
]

#: rank of a field that is never dropped
ALWAYS = math.inf
SPARK_WIDTH = 12
_SPARKS = "▁▂▃▄▅▆▇█"
_BAR_WIDTH = 20
_RATE_WINDOW = 32
_SGR = {"green": "32", "red": "31", "yellow": "33", "magenta": "35", "cyan": "36", "bold": "1", "dim": "2"}
_STATUS_COLOURS = {
    "running": "green",
    "succeeded": "green",
    "failed": "red",
    "stale": "yellow",
    "interrupted": "yellow",
    "awaiting_approval": "yellow",
    "reverted": "magenta",
}


class RunTrend:
    """What the run state does not keep: when the run began, its recent steps and losses."""

    def __init__(self) -> None:
        self.first_us: int | None = None
        self._steps: deque[tuple[int, int]] = deque(maxlen=_RATE_WINDOW)
        self.losses: deque[float] = deque(maxlen=SPARK_WIDTH)

    def add(self, event: Any) -> None:
        ts_us = parse_timestamp_us(event.ts)
        if self.first_us is None:
            self.first_us = ts_us
        if event.event == "train.restarted":
            self._steps.clear()  # a new attempt: its rate starts afresh
        elif event.event == "train.step":
            self._steps.append((ts_us, event.step))
            if event.loss is not None and math.isfinite(event.loss):
                self.losses.append(event.loss)

    def steps_per_s(self) -> float | None:
        """Steps per second over the recent steps of the current attempt."""
        if len(self._steps) < 2:
            return None
        (first_us, first_step), (last_us, last_step) = self._steps[0], self._steps[-1]
        if last_us <= first_us or last_step <= first_step:
            return None
        return (last_step - first_step) * 1_000_000 / (last_us - first_us)

    def elapsed_s(self, run: RunState, now_us: int, status: str) -> float | None:
        """From the run's first line to now while it runs, else to its last line."""
        if self.first_us is None or run.last_ts is None:
            return None
        end_us = now_us if status == "running" else parse_timestamp_us(run.last_ts)
        return max(0, end_us - self.first_us) / 1_000_000


@dataclass(frozen=True)
class Field:
    text: str
    rank: float = ALWAYS
    colour: str | None = None


def item_progress_text(phase: str, done: int, total: int | None, unit: str | None, eta_s: float | None) -> str:
    """Per-item progress of a phase: `eval 1,200/5,000 items, ETA 9.5s`."""
    text = f"{printable(phase)} {done:,}" + (f"/{total:,}" if total is not None else "")
    text += f" {printable(unit)}" if unit else ""
    return text + (f", ETA {format_duration(eta_s)}" if eta_s is not None else "")


def cycle_text(cycle: int, total_cycles: int | None) -> str:
    """A repeated phase's place: `cycle 2 of 5`."""
    return f"cycle {cycle}" + (f" of {total_cycles}" if total_cycles is not None else "")


def trial_text(trial: int, total_trials: int | None, best: dict[str, Any] | None = None) -> str:
    """A trial's place in a search, with the best so far when there is one:
    `trial 7/20, best 0.412 (trial 3)`."""
    text = f"trial {trial}" + (f"/{total_trials}" if total_trials is not None else "")
    if best is not None and isinstance(best.get("value"), (int, float)):
        text += f", best {best['value']:.4g} (trial {best['trial']})"
    return text


def params_text(params: dict[str, Any] | None) -> str:
    """A trial's first four params by name, integers as integers: `batch=32, lr=0.01`
    (the verdict's rule, for running and ended trials alike)."""
    return verdict_params_text(params)


def _running_trial(run: RunState) -> int | None:
    """The number of the trial under way (the last one started that has not ended)."""
    running = [record["trial"] for record in run.trials["list"] if record["status"] == "running"]
    return running[-1] if running else None


def status_fields(run: RunState, trend: RunTrend, status: str, now_us: int, *, unicode: bool = True) -> list[Field]:
    """The fields of a run's line, in display order, each with its rank."""
    fields = [Field(f"[{printable(run.run_id)}]", 7, "dim")]
    fields.append(Field(printable(status), 1 if status == "running" else 9, _STATUS_COLOURS.get(status)))
    trial = _running_trial(run)
    if trial is not None:
        fields.append(Field(trial_text(trial, run.trials["total"], run.trials["best"]), 8.5))
    counted = run.phase_progress
    if counted is not None:
        # the phase counting items: its name is in the field, which stays as the step does
        fields.append(
            Field(
                item_progress_text(
                    counted["phase"], counted["done"], counted["total"], counted["unit"], counted["eta_s"]
                ),
                colour="cyan",
            )
        )
    if run.phase and (counted is None or counted["phase"] != run.phase):
        fields.append(Field(printable(run.phase), 2))
    if run.cycle is not None:
        fields.append(Field(cycle_text(run.cycle["cycle"], run.cycle["total_cycles"]), 6.5))
    if run.progress is not None:
        filled = round(run.progress * _BAR_WIDTH)
        fields.append(Field("[" + "#" * filled + "." * (_BAR_WIDTH - filled) + "]", 3))
        fields.append(Field(f"{run.progress:.0%}", 4))
    if run.step is not None:
        fields.append(Field(f"step {run.step}" + (f"/{run.total_steps}" if run.total_steps is not None else "")))
    elapsed = trend.elapsed_s(run, now_us, status)
    if elapsed is not None:
        fields.append(Field(f"elapsed {format_duration(elapsed)}", 5))
    if run.eta_s is not None and run.finished is None:
        fields.append(Field(f"eta {format_duration(run.eta_s)}", colour="cyan"))
    rate = trend.steps_per_s()
    if rate is not None:
        fields.append(Field(format_rate(rate), 5))
    if run.loss is not None:
        fields.append(Field(f"loss {run.loss:.4g}", colour="bold"))
    if len(trend.losses) >= 2:
        fields.append(Field(sparkline(trend.losses, unicode=unicode), 4, "cyan"))
    if run.learning_rate is not None:
        fields.append(Field(f"lr {run.learning_rate:.2e}", 2))
    if run.restarts:
        fields.append(Field(f"restarts {len(run.restarts)}", 6, "yellow"))
    if run.stop_requested and run.finished is None:
        fields.append(Field("stopping", 8, "yellow"))
    return fields


def sparkline(values: Any, *, unicode: bool = True) -> str:
    """One character per value, from the lowest to the highest block (ASCII without Unicode)."""
    marks = _SPARKS if unicode else "_.-=^"
    low, high = min(values), max(values)
    spread = high - low
    if spread <= 0:
        return marks[len(marks) // 2] * len(values)
    return "".join(marks[min(len(marks) - 1, int((value - low) / spread * len(marks)))] for value in values)


def fit(fields: list[Field], width: int) -> list[Field]:
    """Drop the lowest-ranked fields (the rightmost first among equals) until the line fits."""
    shown = list(fields)
    while cells(" ".join(field.text for field in shown)) > width:
        droppable = [index for index, field in enumerate(shown) if field.rank != ALWAYS]
        if not droppable:
            break
        lowest = min(shown[index].rank for index in droppable)
        del shown[max(index for index in droppable if shown[index].rank == lowest)]
    return shown


def render_status(fields: list[Field], width: int, *, colour: bool) -> str:
    """The fitted fields as one line no wider than `width` cells, coloured with ANSI codes if asked."""
    shown = fit(fields, width)
    plain = " ".join(field.text for field in shown)
    if cells(plain) > width:
        return cut(plain, width)  # only the fields that always stay, on a very narrow terminal
    if not colour:
        return plain
    return " ".join(_paint(field.text, field.colour) for field in shown)


def _paint(text: str, colour: str | None) -> str:
    return text if colour is None else f"\x1b[{_SGR[colour]}m{text}\x1b[0m"


def cells(text: str) -> int:
    """Terminal cells taken by `text` (wide East Asian characters take two)."""
    if text.isascii():
        return len(text)
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text)


def cut(text: str, width: int) -> str:
    """The longest start of `text` that takes at most `width` cells."""
    taken = 0
    for index, char in enumerate(text):
        taken += cells(char)
        if taken > width:
            return text[:index]
    return text
