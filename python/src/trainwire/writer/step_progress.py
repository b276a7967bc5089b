"""Where one trial (or the run outside any trial) is in its steps: the current attempt, the
derived `elapsed_s`, `eta_s` and `progress` (writer rule 6), and whether a step is due under
the throttle (writer rule 5). The run keeps one per trial, so that a trial's steps starting
again at 1 are that trial's first steps, not steps going back."""

from __future__ import annotations

from trainwire.writer.fields import microseconds

__all__ = ["StepProgress"]


class StepProgress:
    """Step bookkeeping of one trial attempt; times are the run clock's monotonic seconds."""

    def __init__(self, interval_s: float, total_steps: int | None = None) -> None:
        self.interval_s = interval_s
        self.total_steps = total_steps
        self.last_step: int | None = None
        self.attempt = 1
        self._attempt_start: float | None = None  # monotonic time of the attempt's first step
        # where the ETA's pace is measured from: the attempt's first step, or the first step
        # after a rollback (the steps redone are not fast ones)
        self._pace_start: float | None = None
        self._pace_start_step = 0
        self.last_written = 0.0

    def report(self, step: int, now: float) -> tuple[float, float | None, float | None, bool]:
        """Records `step` at `now`: `(elapsed_s, eta_s, progress, due)`, the times rounded
        to the microsecond; `due` says whether the step is written now rather than kept
        pending (writer rule 5), and a due step counts as written at `now`."""
        start = self._attempt_start
        if start is None:
            start = self._attempt_start = now
        pace = self._pace_start
        first_of_pace = pace is None
        if pace is None:
            pace = self._pace_start = now
            self._pace_start_step = step
        total = self.total_steps
        elapsed = microseconds(now - start)
        paced = elapsed if pace == start else microseconds(now - pace)
        done = step - self._pace_start_step
        # clamped (by microseconds and min): a step past the planned total must not give a
        # negative ETA or a progress above 1
        eta = microseconds(paced * (total - step) / done) if total is not None and done > 0 else None
        progress = min(step / total, 1.0) if total else None
        self.last_step = step
        due = first_of_pace or step == total or now - self.last_written >= self.interval_s
        if due:
            self.last_written = now
        return elapsed, eta, progress, due

    def restart(self, step: int) -> tuple[int, int]:
        """Starts a new attempt at `step`: `(attempt, previous_step)`; the ETA starts over."""
        self.attempt += 1
        previous = self.last_step if self.last_step is not None else 0
        self.last_step = step
        self._attempt_start = None
        self._pace_start = None
        return self.attempt, previous

    def roll_back(self, step: int) -> None:
        """Goes back to `step` within the attempt: `elapsed_s` goes on, the next step is
        written at once and the ETA's pace is measured from it."""
        self.last_step = step
        self._pace_start = None
