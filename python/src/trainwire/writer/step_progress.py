"""Where a run is in its steps: the current attempt, the derived `elapsed_s`, `eta_s` and
`progress` (writer rule 6), and whether a step is due under the throttle (writer rule 5)."""

from __future__ import annotations

from trainwire.writer.fields import microseconds

__all__ = ["StepProgress"]


class StepProgress:
    """Step bookkeeping of one run; times are the run clock's monotonic seconds."""

    def __init__(self, interval_s: float) -> None:
        self.interval_s = interval_s
        self.total_steps: int | None = None
        self.last_step: int | None = None
        self.attempt = 1
        self._attempt_start: float | None = None  # monotonic time of the attempt's first step
        self._attempt_start_step = 0
        self.last_written = 0.0

    def report(self, step: int, now: float) -> tuple[float, float | None, float | None, bool]:
        """Records `step` at `now`: `(elapsed_s, eta_s, progress, due)`, the times rounded
        to the microsecond; `due` says whether the step is written now rather than kept
        pending (writer rule 5), and a due step counts as written at `now`."""
        start = self._attempt_start
        first_of_attempt = start is None
        if start is None:
            start = self._attempt_start = now
            self._attempt_start_step = step
        total = self.total_steps
        elapsed = microseconds(now - start)
        done = step - self._attempt_start_step
        # clamped (by microseconds and min): a step past the planned total must not give a
        # negative ETA or a progress above 1
        eta = microseconds(elapsed * (total - step) / done) if total is not None and done > 0 else None
        progress = min(step / total, 1.0) if total else None
        self.last_step = step
        due = first_of_attempt or step == total or now - self.last_written >= self.interval_s
        if due:
            self.last_written = now
        return elapsed, eta, progress, due

    def restart(self, step: int) -> tuple[int, int]:
        """Starts a new attempt at `step`: `(attempt, previous_step)`; the ETA starts over."""
        self.attempt += 1
        previous = self.last_step if self.last_step is not None else 0
        self.last_step = step
        self._attempt_start = None
        return self.attempt, previous
