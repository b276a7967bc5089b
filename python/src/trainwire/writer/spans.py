"""What a run has open and since when: its phases and trials, whose `phase.ended` and
`trial.ended` carry the time since they started, which phase a heartbeat names, and what the
run's end still has to close."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from typing import Any, NamedTuple

from trainwire.writer.fields import microseconds

__all__ = ["OpenPhase", "OpenSpans", "OpenTrial"]


class OpenPhase(NamedTuple):
    name: str
    started: float
    order: int  # when it was opened among the run's phases and trials
    trial: int | None
    cycle: dict[str, Any]  # `cycle` and `total_cycles` as written on `phase.started`


class OpenTrial(NamedTuple):
    trial: int
    attempt: int
    started: float
    order: int


logger = logging.getLogger("trainwire.writer")


class OpenSpans:
    """Open phases (innermost last) and trials by `(trial, attempt)`, on the run's monotonic clock."""

    def __init__(self, monotonic: Callable[[], float]) -> None:
        self._monotonic = monotonic
        self._phases: list[OpenPhase] = []
        self._trials: dict[tuple[int, int], OpenTrial] = {}
        self._ended_trials: set[tuple[int, int]] = set()  # one trial.ended per attempt
        self._order = itertools.count()

    @property
    def innermost_phase(self) -> str | None:
        return self._phases[-1].name if self._phases else None

    def since(self, start: float) -> float:
        """Seconds since the monotonic time `start`, rounded to the microsecond (the precision of `ts`)."""
        return microseconds(self._monotonic() - start)

    def open_phase(self, name: str, trial: int | None = None, cycle: dict[str, Any] | None = None) -> None:
        self._phases.append(OpenPhase(name, self._monotonic(), next(self._order), trial, cycle or {}))

    def close_phase(self, name: str) -> float:
        """The duration of the latest open phase `name`, now closed; 0.0 when it was not open."""
        for index in range(len(self._phases) - 1, -1, -1):
            if self._phases[index][0] == name:
                return self.since(self._phases.pop(index).started)
        logger.debug("trainwire: phase %r ended but was not started", name)
        return 0.0

    def open_trial(self, trial: int, attempt: int) -> None:
        self._ended_trials.discard((trial, attempt))
        self._trials[(trial, attempt)] = OpenTrial(trial, attempt, self._monotonic(), next(self._order))

    def trial_ended_before(self, trial: int, attempt: int) -> bool:
        """Whether this attempt of the trial already ended (and was not started again)."""
        return (trial, attempt) in self._ended_trials

    def close_trial(self, trial: int, attempt: int) -> float:
        """The duration of the trial attempt, now closed; 0.0 when it was not started."""
        opened = self._trials.pop((trial, attempt), None)
        self._ended_trials.add((trial, attempt))
        return 0.0 if opened is None else self.since(opened.started)

    def still_open(self) -> list[OpenPhase | OpenTrial]:
        """The phases and trials open on any thread, the latest opened first: the order the
        run's end closes them in, so an inner one ends before the one around it."""
        spans: list[OpenPhase | OpenTrial] = [*self._phases, *self._trials.values()]
        return sorted(spans, key=lambda span: span.order, reverse=True)
