"""Progress inside an open phase (`phase.progress`): the plan, the count, the ETA from the
phase's own pace, and whether a count is due under the throttle, which is the steps' (writer
rule 5): the first count and the one reaching the plan always written."""

from __future__ import annotations

from typing import Any

from trainwire.writer.fields import microseconds

__all__ = ["PhaseCount"]


class PhaseCount:
    """One open phase on one thread; times are the run clock's monotonic seconds."""

    def __init__(
        self, name: str, opened: float, *, total: int | None, unit: str | None, trial: int | None, cycle: dict[str, Any]
    ) -> None:
        self.name = name
        self.total = total
        self.unit = unit
        self.trial = trial
        self.cycle = cycle  # `cycle` and `total_cycles` as given, repeated on `phase.ended`
        self.done = 0
        self._opened = opened
        self._counted = False
        self.last_written = 0.0

    def advance(self, n: int, now: float, interval_s: float) -> tuple[dict[str, Any], bool]:
        """Counts `n` more items at `now`: the `phase.progress` payload and whether it is
        due (written now rather than kept pending); a due count counts as written at `now`."""
        before, done, total = self.done, self.done + n, self.total
        self.done = done
        # clamped by microseconds: a count past the plan is accepted and gives an ETA of 0
        eta = microseconds((now - self._opened) * (total - done) / done) if total is not None and done > 0 else None
        payload: dict[str, Any] = {"phase": self.name, "done": done, "total": total}
        if self.unit is not None:
            payload["unit"] = self.unit
        payload["eta_s"] = eta
        if self.trial is not None:
            payload["trial"] = self.trial
        reaches_plan = total is not None and before < total <= done
        due = not self._counted or reaches_plan or now - self.last_written >= interval_s
        self._counted = True
        if due:
            self.last_written = now
        return payload, due
