"""One `train.step` per trainer step, with its loss when the trainer logs one.

transformers calls `on_step_end` before it logs the step (`on_log`), and with the `epoch`
logging strategy the step's log even comes after `on_epoch_end` (and after the step's
evaluation and checkpoint). A step that may still get a log is held here and written once:
by the log (with its loss) or, when no log came, at the next step or epoch begin or the end
of training. A `train.epoch` that falls on a held step waits behind it.
"""

from __future__ import annotations

from typing import Any

from trainwire.writer.run import Run

__all__ = ["HeldStep"]


class HeldStep:
    """The step (and the completed epoch) waiting for the trainer's log of it."""

    def __init__(self) -> None:
        self._step: dict[str, Any] | None = None  # Run.step keyword arguments
        self._epoch: tuple[int, int] | None = None  # (epoch, step) of a completed epoch

    @property
    def step(self) -> int | None:
        """The held step's number, or None."""
        return None if self._step is None else self._step["step"]

    def hold(self, fields: dict[str, Any]) -> None:
        self._step = fields

    def hold_epoch(self, epoch: int, step: int) -> None:
        self._epoch = (epoch, step)

    def write(self, run: Run | None, logged: dict[str, Any] | None = None, loss: float | None = None) -> None:
        """Writes the held step, `logged` fields over the held ones, then the held epoch.

        `loss` is the epoch's loss when none was logged with the step.
        """
        step, self._step = self._step, None
        epoch, self._epoch = self._epoch, None
        if run is None:
            return
        if step is not None or logged is not None:
            fields = {**(step or {}), **(logged or {})}
            run.step(fields.pop("step"), **fields)
            loss = fields.get("loss", loss)
        if epoch is not None:
            run.epoch(epoch[0], epoch[1], metrics={"loss": loss} if loss is not None else {})
