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
from trainwire.writer.run_core import _RunCore
from trainwire.writer.scopes import PhasePlan
from trainwire.writer.spans import OpenPhase
from trainwire.writer.values import integer

if TYPE_CHECKING:
    from typing_extensions import Self, Unpack  # in typing from Python 3.11

__all__: list[str] = []  # a base of `Run` only


class _PhaseEvents(_RunCore):
    """Phases, each open on the thread that started it (its count in the thread's scopes,
    its time in the open spans), with its items counted by `advance()`."""

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
        """Writes `phase.started`; the phase is open until `phase_ended(name)`.

        `total` and `unit` are the plan `advance()` counts against on this thread; `cycle`
        (from 1) and `total_cycles` place a repeated phase ("cycle 2 of 5") and are written
        on its `phase.ended` too. `trial` defaults to the thread's trial scope.
        """
        if not self._active:
            return
        trial = self._trial_for("phase.started", trial)
        with self._lock:
            if not self._args.phase_name("phase.started", name):
                return
            plan = self._args.optional_int("phase.started", "total", total)
            if unit is not None and not (isinstance(unit, str) and 1 <= len(unit) <= 64):
                self._complain("phase.progress.unit", f"unit {unit!r} is not a name of 1 to 64 characters; left out")
                unit = None
            cycle_fields = self._args.cycle_fields(cycle, total_cycles)
            self._spans.open_phase(name, trial, cycle_fields)
            self._scopes.phases.append(
                PhaseCount(name, self._monotonic(), total=plan, unit=unit, trial=trial, cycle=cycle_fields)
            )
            self._emit("phase.started", self._stamped({"phase": name, **cycle_fields}, trial))

    def phase_ended(self, name: str, status: str = "ok", *, trial: int | None = None) -> None:
        """Writes `phase.ended` with the time since the phase started (and its cycle).

        `status` is `ok`, `failed`, `skipped` or `interrupted`.
        """
        if not self._active:
            return
        opened = self._scopes.close_phase(name) if isinstance(name, str) else None
        if trial is None and opened is not None:
            trial = opened.trial
        trial = self._trial_for("phase.ended", trial)
        with self._lock:
            if not self._args.phase_name("phase.ended", name):
                return
            duration = self._spans.close_phase(name)
            if not self._args.one_of(
                "phase.ended.status", "phase status", status, PHASE_STATUSES, "phase.ended not written"
            ):
                return
            self._write_phase_ended(name, status, duration, opened.cycle if opened is not None else {}, trial)

    def _write_phase_ended(
        self, name: str, status: str, duration: float, cycle_fields: dict[str, Any], trial: int | None
    ) -> None:
        self._emit(
            "phase.ended",
            self._stamped({"phase": name, "status": status, "duration_s": duration, **cycle_fields}, trial),
        )

    def _end_open_phase(self, opened: OpenPhase, status: str) -> None:
        """Ends a phase the run's end found open, on whichever thread opened it (lock held)."""
        self._scopes.close_phase(opened.name)  # its count, when this thread opened it
        self._write_phase_ended(opened.name, status, self._spans.close_phase(opened.name), opened.cycle, opened.trial)

    @contextlib.contextmanager
    def phase(self, name: str, **plan: Unpack[PhasePlan]) -> Iterator[Self]:
        """A phase around a block: ends `ok`, `failed` when the block raises, `interrupted`
        when it raises `RunInterrupted` or `KeyboardInterrupt`. The exception goes on.
        The keyword arguments (`total`, `unit`, `cycle`, `total_cycles`, `trial`) are
        `phase_started`'s; `advance()` counts inside the block. A stop requested raises
        `RunInterrupted` before the phase starts and after it ends (a phase boundary)."""
        self._stop.poll(force=True)
        self.phase_started(name, **plan)
        trial = plan.get("trial")
        try:
            yield self
        except BaseException as error:
            status = status_for_exception(error)
            self.phase_ended(name, "interrupted" if status == "interrupted" else "failed", trial=trial)
            raise
        self.phase_ended(name, "ok", trial=trial)
        self._stop.poll(force=True)

    def advance(self, n: int = 1) -> None:
        """Counts `n` items done in this thread's innermost open phase; writes
        `phase.progress` unless throttled like steps (the first count and the one that
        reaches the plan are always written). A count past the plan is accepted."""
        if not self._active:
            return
        count = integer(n)
        if not isinstance(count, int):
            self._complain("phase.progress.done", f"advance({n!r}): not an integer >= 0; not counted")
            return
        phases = self._scopes.phases
        if not phases:
            self._complain("phase.progress.phase", "advance() outside an open phase of this thread; not counted")
            return
        with self._lock:
            if (self._finished or not self._started) and not self._ready("phase.progress"):
                return
            opened, now = phases[-1], self._monotonic()
            payload, due = opened.advance(count, now, self._step_interval_s)
            line = self._lines.new_line("phase.progress")
            line.update(payload)
            if due:
                self._lines.write_fresh(line, opened)
            else:
                self._lines.hold(line, now, opened)
