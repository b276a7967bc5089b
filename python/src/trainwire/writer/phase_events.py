"""The phases `Run` writes: `phase.started`, `phase.ended`, the `phase()` block and
`advance()`, which counts a phase's items into `phase.progress` (throttled like steps)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from trainwire.contract.status import status_for_exception
from trainwire.writer.arguments import PHASE_STATUSES
from trainwire.writer.fields import UNSET, Unset
from trainwire.writer.phase_progress import PhaseCount
from trainwire.writer.run_core import RunCore
from trainwire.writer.scopes import PhasePlan
from trainwire.writer.spans import OpenPhase
from trainwire.writer.values import integer

if TYPE_CHECKING:
    from typing_extensions import Unpack  # in typing from Python 3.11

__all__ = ["PhaseEvents"]


class PhaseEvents:
    """Phases, each open on the thread that started it, with its items counted by `advance()`;
    each method is `Run`'s of the same name, documented there."""

    def __init__(self, core: RunCore) -> None:
        self._core = core

    def phase_started(
        self,
        name: str,
        *,
        total: int | None = None,
        unit: str | None = None,
        cycle: int | None = None,
        total_cycles: int | None | Unset = UNSET,
        trial: int | None = None,
    ) -> None:
        core = self._core
        if not core.active:
            return
        trial = core.trial_for("phase.started", trial)
        with core.lock:
            if not core.args.phase_name("phase.started", name):
                return
            plan = core.args.optional_int("phase.started", "total", total)
            if unit is not None and not (isinstance(unit, str) and 1 <= len(unit) <= 64):
                core.complain("phase.progress.unit", f"unit {unit!r} is not a name of 1 to 64 characters; left out")
                unit = None
            cycle_fields = core.args.cycle_fields(cycle, total_cycles)
            core.spans.open_phase(name, trial, cycle_fields)
            core.scopes.phases.append(
                PhaseCount(name, core.monotonic(), total=plan, unit=unit, trial=trial, cycle=cycle_fields)
            )
            core.emit("phase.started", core.stamped({"phase": name, **cycle_fields}, trial))

    def phase_ended(self, name: str, status: str = "ok", *, trial: int | None = None) -> None:
        core = self._core
        if not core.active:
            return
        opened = core.scopes.close_phase(name) if isinstance(name, str) else None
        if trial is None and opened is not None:
            trial = opened.trial
        trial = core.trial_for("phase.ended", trial)
        with core.lock:
            if not core.args.phase_name("phase.ended", name):
                return
            duration = core.spans.close_phase(name)
            if not core.args.one_of(
                "phase.ended.status", "phase status", status, PHASE_STATUSES, "phase.ended not written"
            ):
                return
            self._write_phase_ended(name, status, duration, opened.cycle if opened is not None else {}, trial)

    def _write_phase_ended(
        self, name: str, status: str, duration: float, cycle_fields: dict[str, Any], trial: int | None
    ) -> None:
        core = self._core
        core.emit(
            "phase.ended",
            core.stamped({"phase": name, "status": status, "duration_s": duration, **cycle_fields}, trial),
        )

    def end_open_phase(self, opened: OpenPhase, status: str) -> None:
        """Ends a phase the run's end found open, on whichever thread opened it (lock held)."""
        core = self._core
        core.scopes.close_phase(opened.name)  # its count, when this thread opened it
        self._write_phase_ended(opened.name, status, core.spans.close_phase(opened.name), opened.cycle, opened.trial)

    @contextlib.contextmanager
    def phase(self, name: str, **plan: Unpack[PhasePlan]) -> Iterator[None]:
        """A phase around a block (`Run.phase` yields the run itself)."""
        self.phase_started(name, **plan)
        trial = plan.get("trial")
        try:
            yield
        except BaseException as error:
            status = status_for_exception(error)
            self.phase_ended(name, "interrupted" if status == "interrupted" else "failed", trial=trial)
            raise
        self.phase_ended(name, "ok", trial=trial)

    def advance(self, n: int = 1) -> None:
        core = self._core
        if not core.active:
            return
        count = integer(n)
        if not isinstance(count, int):
            core.complain("phase.progress.done", f"advance({n!r}): not an integer >= 0; not counted")
            return
        phases = core.scopes.phases
        if not phases:
            core.complain("phase.progress.phase", "advance() outside an open phase of this thread; not counted")
            return
        with core.lock:
            if (core.finished or not core.started) and not core.ready("phase.progress"):
                return
            opened, now = phases[-1], core.monotonic()
            payload, due = opened.advance(count, now, core.steps.interval_s)
            line = core.lines.new_line("phase.progress")
            line.update(payload)
            if due:
                core.lines.write_fresh(line, opened)
            else:
                core.lines.hold(line, now, opened)
