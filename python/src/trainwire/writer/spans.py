"""What a run has open and since when: its phases and trials, whose `phase.ended` and
`trial.ended` carry the time since they started, and which phase a heartbeat names."""

from __future__ import annotations

import logging
from collections.abc import Callable

from trainwire.writer.fields import microseconds

__all__ = ["OpenSpans"]

logger = logging.getLogger("trainwire.writer")


class OpenSpans:
    """Open phases (innermost last) and trials by `(trial, attempt)`, on the run's monotonic clock."""

    def __init__(self, monotonic: Callable[[], float]) -> None:
        self._monotonic = monotonic
        self._phases: list[tuple[str, float]] = []
        self._trials: dict[tuple[int, int], float] = {}

    @property
    def innermost_phase(self) -> str | None:
        return self._phases[-1][0] if self._phases else None

    def since(self, start: float) -> float:
        """Seconds since the monotonic time `start`, rounded to the microsecond (the precision of `ts`)."""
        return microseconds(self._monotonic() - start)

    def open_phase(self, name: str) -> None:
        self._phases.append((name, self._monotonic()))

    def close_phase(self, name: str) -> float:
        """The duration of the latest open phase `name`, now closed; 0.0 when it was not open."""
        for index in range(len(self._phases) - 1, -1, -1):
            if self._phases[index][0] == name:
                return self.since(self._phases.pop(index)[1])
        logger.debug("trainwire: phase %r ended but was not started", name)
        return 0.0

    def open_trial(self, trial: int, attempt: int) -> None:
        self._trials[(trial, attempt)] = self._monotonic()

    def close_trial(self, trial: int, attempt: int) -> float:
        """The duration of the trial attempt, now closed; 0.0 when it was not started."""
        started = self._trials.pop((trial, attempt), None)
        return 0.0 if started is None else self.since(started)
