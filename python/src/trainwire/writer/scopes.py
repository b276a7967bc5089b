"""What each thread has open: its trial scopes, whose number is stamped on the events the
thread writes, and its phases with their item counts (`Run.advance` counts in the innermost).

Per thread because a search may run its trials on threads of one process: each thread's
events belong to the trial it runs."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from trainwire.writer.fields import Unset
from trainwire.writer.phase_progress import PhaseCount

__all__ = ["PhasePlan", "ThreadScopes", "TrialOutcome"]


class PhasePlan(TypedDict, total=False):
    """The keyword arguments of `Run.phase_started` that `Run.phase` passes on."""

    total: int | None
    unit: str | None
    cycle: int | None
    total_cycles: int | None | Unset
    trial: int | None


@dataclass
class TrialOutcome:
    """What the body of `Run.trial()` says about its trial, written in `trial.ended`.

    `status` left None ends the trial `succeeded`, or `failed` when the body raises.
    """

    status: str | None = None
    metrics: Mapping[str, Any] | None = None
    best: Mapping[str, Any] | None = None
    accepted: bool | None = None


class ThreadScopes(threading.local):
    """The open trial scopes and phases of the calling thread, innermost last."""

    def __init__(self) -> None:
        self.trials: list[int | None] = []  # None: a scope whose number could not be taken
        #: each trial scope's opening, called before the first event written in it (then None)
        self.openings: list[Callable[[], object] | None] = []
        self.phases: list[PhaseCount] = []

    def take_opening(self) -> Callable[[], object] | None:
        """The innermost trial scope's opening, once (None when it has none or was taken)."""
        if not self.openings:
            return None
        opening = self.openings[-1]
        self.openings[-1] = None
        return opening

    @property
    def trial(self) -> int | None:
        """The trial of the innermost open trial scope, or None outside one."""
        return self.trials[-1] if self.trials else None

    def close_phase(self, name: str) -> PhaseCount | None:
        """The latest open phase `name` of this thread, now closed; None when it is not open."""
        for index in range(len(self.phases) - 1, -1, -1):
            if self.phases[index].name == name:
                return self.phases.pop(index)
        return None
