"""The evaluation and prediction loops of a trainer as phases with per-item progress.

A framework reports each batch of such a loop; the first batch opens the loop's phase
(`eval`, `predict`, `validate`) with the number of batches it plans, each batch counts one
with `Run.advance()` (throttled like steps by the run), and the loop's end closes the phase.
An evaluation inside training is a phase of its own, nested in `train` (docs/decisions.md).
"""

from __future__ import annotations

from typing import Any

from trainwire.writer.run import Run

__all__ = ["LoopProgress", "planned_batches"]

#: what a loop's items are
UNIT = "batches"


def planned_batches(loader: Any) -> int | None:
    """How many batches `loader` yields, when it knows (an iterable dataset may not)."""
    try:
        count = len(loader)
    except Exception:  # no __len__, or one that raises (an iterable dataset)
        return None
    return count if isinstance(count, int) and count >= 0 else None


class LoopProgress:
    """The open loop phase of one trainer, if any."""

    def __init__(self) -> None:
        self._open: tuple[Run, str] | None = None

    @property
    def is_open(self) -> bool:
        return self._open is not None

    def ensure_open(self, run: Run, phase: str, total: int | None = None) -> Run:
        """The loop's phase, opened now unless it is open already; the run it is open in."""
        if self._open is None:
            run.phase_started(phase, total=total, unit=UNIT)
            self._open = (run, phase)
        return self._open[0]

    def batch_done(self, run: Run, phase: str, total: int | None) -> None:
        """One batch of the loop `phase` is done; the first one opens the phase."""
        self.ensure_open(run, phase, total).advance()

    def end(self, status: str = "ok") -> None:
        """The loop ended (`ok`), failed or was interrupted: its phase closes, if it opened."""
        if self._open is not None:
            run, phase = self._open
            self._open = None
            run.phase_ended(phase, status)
