"""The training events `Run` writes: `train.step` (the per-step hot path, its line built in place:
`make bench` holds it to plain `json.dumps` + write), `train.epoch`, `train.restarted`,
`train.rolled_back`, `eval.completed` and `checkpoint.saved`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from trainwire.writer.fields import UNSET, Unset, clean_metrics
from trainwire.writer.memory import device_memory
from trainwire.writer.paths import PathLike
from trainwire.writer.payloads import (
    checkpoint_payload,
    eval_payload,
    restart_reason,
    restart_sizes,
    rolled_back_payload,
)
from trainwire.writer.run_core import _RunCore
from trainwire.writer.step_progress import StepProgress
from trainwire.writer.values import BAD, integer

__all__: list[str] = []  # a base of `Run` only


class _TrainingEvents(_RunCore):
    """The events of training itself, each for the thread's trial unless given one, and the
    step bookkeeping they change: of the run outside trials and of each trial's latest attempt."""

    _steps: StepProgress  # train.step state outside trials (writer rules 5 and 6)
    _trial_steps: dict[int, StepProgress]  # the same, of each trial's latest attempt
    _step_envelope: dict[str, Any]  # copied for each step
    _last_step: int | None = None  # of the run, whichever trial reported it

    @property
    def last_step(self) -> int | None:
        """The last step reported (written or not, in any trial), or None before the first."""
        return self._last_step

    def step(
        self,
        step: int,
        *,
        total_steps: int | None | Unset = UNSET,
        epoch: float | None = None,
        loss: float | None = None,
        learning_rate: float | None = None,
        grad_norm: float | None | Unset = UNSET,
        samples_per_s: float | None | Unset = UNSET,
        tokens_per_s: float | None | Unset = UNSET,
        tokens_seen: int | None | Unset = UNSET,
        metrics: Mapping[str, Any] | None = None,
        memory: Mapping[str, Mapping[str, Any]] | None = None,
        trial: int | None = None,
    ) -> None:
        """Reports a training step; writes `train.step` unless throttled (writer rule 5).

        `total_steps` is kept from `start()` or the last call that gave it. `elapsed_s`,
        `eta_s` and `progress` are derived from the current attempt of the trial (writer
        rule 6). Optional fields left `UNSET` (and `metrics=None`, `memory=None`) are
        omitted; `None` writes null. `memory` is `{device: {allocated_bytes,
        reserved_bytes, peak_bytes}}`; `trial` defaults to the thread's trial scope.
        """
        try:
            if not self._active:
                return
            if trial is None:
                scopes = self._scopes.trials  # inline: the per-step path
                trial = scopes[-1] if scopes else None
                if trial is not None:
                    self._open_scope()  # the trial's start (a late trial.started) before its first step
            else:
                trial = self._args.trial("train.step", trial)
            with self._lock:
                if (self._finished or not self._started) and not self._ready("train.step"):
                    return
                if type(step) is not int or step < 0:  # the common case costs one check
                    checked_step = integer(step)
                    if not isinstance(checked_step, int):
                        self._complain(
                            "train.step.step", f"step {step!r} is not an integer >= 0; train.step not written"
                        )
                        return
                    step = checked_step
                now = self._monotonic()
                steps = self._steps if trial is None else self._steps_for(trial)
                self._last_step = step
                if total_steps is not UNSET:
                    total = integer(total_steps)
                    if total is BAD:
                        self._complain(
                            "train.step.total_steps", f"total_steps={total_steps!r} is not an integer >= 0; ignored"
                        )
                    else:
                        steps.total_steps = total
                elapsed, eta, progress, due = steps.report(step, now)
                line = self._step_envelope.copy()
                line["step"] = step
                line["total_steps"] = steps.total_steps
                # plain floats and None (the common case) go straight in
                line["epoch"] = epoch if epoch is None else self._args.number("train.step", "epoch", epoch, 0)
                line["loss"] = (
                    loss if loss is None or type(loss) is float else self._args.number("train.step", "loss", loss)
                )
                line["learning_rate"] = (
                    learning_rate
                    if learning_rate is None or type(learning_rate) is float
                    else self._args.number("train.step", "learning_rate", learning_rate)
                )
                if grad_norm is not UNSET:
                    line["grad_norm"] = self._args.number("train.step", "grad_norm", grad_norm)
                line["elapsed_s"] = elapsed
                line["eta_s"] = eta
                line["progress"] = progress
                if samples_per_s is not UNSET:
                    line["samples_per_s"] = self._args.number("train.step", "samples_per_s", samples_per_s, 0)
                if tokens_per_s is not UNSET:
                    line["tokens_per_s"] = self._args.number("train.step", "tokens_per_s", tokens_per_s, 0)
                if tokens_seen is not UNSET:
                    line["tokens_seen"] = self._args.optional_int("train.step", "tokens_seen", tokens_seen)
                if metrics is not None:
                    line["metrics"] = clean_metrics(metrics, self._complain)
                if memory is not None:
                    devices = device_memory(memory, self._complain)
                    if devices is not None:
                        line["memory"] = devices
                if trial is not None:
                    line["trial"] = trial
                if due:
                    self._lines.write_fresh(line, steps)  # the trial's pending step, if any, is superseded
                else:
                    self._lines.hold(line, now, steps)
        finally:
            if self._stop.control is not None:  # inside the block: a requested stop raises here
                self._stop.poll()

    def epoch(
        self, epoch: int, step: int, metrics: Mapping[str, Any] | None = None, *, trial: int | None = None
    ) -> None:
        """Writes `train.epoch`: epoch `epoch` (from 1) was completed at `step`."""
        counted = self._args.counts("train.epoch", epoch=(epoch, 1), step=(step, 0))
        if counted is not None:
            payload = {**counted, "metrics": clean_metrics(metrics, self._complain)}
            self._emit_active("train.epoch", self._stamped(payload, self._trial_for("train.epoch", trial)))

    def restarted(
        self,
        reason: str = "oom",
        *,
        step: int = 0,
        batch_size_from: int | None | Unset = UNSET,
        batch_size_to: int | None | Unset = UNSET,
        total_steps: int | None | Unset = UNSET,
        trial: int | None = None,
    ) -> None:
        """Writes `train.restarted` (the attempt is counted here, per trial) and starts a new
        attempt: the next step is written at once and the ETA starts over from it."""
        if not self._active:
            return
        trial = self._trial_for("train.restarted", trial)
        with self._lock:
            counted = self._ready("train.restarted") and self._args.counts("train.restarted", step=(step, 0))
            if not counted:
                return
            reason = restart_reason(self._args, reason)
            step = counted["step"]
            self._lines.flush_pending()
            steps = self._steps_for(trial)
            attempt, previous_step = steps.restart(step)
            self._last_step = step  # the new attempt starts there, as run.finished and the heartbeat say
            payload: dict[str, Any] = {
                "reason": reason,
                "attempt": attempt,
                "previous_step": previous_step,
                "step": step,
            }
            payload.update(restart_sizes(self._args, batch_size_from, batch_size_to))
            if total_steps is not UNSET:
                payload["total_steps"] = steps.total_steps = self._args.optional_int(
                    "train.restarted", "total_steps", total_steps
                )
            self._emit("train.restarted", self._stamped(payload, trial))

    def rolled_back(
        self,
        previous_step: int,
        step: int,
        *,
        checkpoint: PathLike | None = None,
        reason: str | None = None,
        trial: int | None = None,
    ) -> None:
        """Writes `train.rolled_back`: training went back from `previous_step` to `step`
        (the step `checkpoint` holds) within the same attempt. The next step is written at
        once, `elapsed_s` goes on and the ETA's pace starts over from that step."""
        if not self._active:
            return
        trial = self._trial_for("train.rolled_back", trial)
        payload = rolled_back_payload(self._args, self._output_dir, previous_step, step, checkpoint, reason)
        if payload is None:
            return
        with self._lock:
            if not self._ready("train.rolled_back"):
                return
            self._lines.flush_pending()
            self._steps_for(trial).roll_back(payload["step"])
            self._last_step = payload["step"]
            self._emit("train.rolled_back", self._stamped(payload, trial))

    def _steps_for(self, trial: int | None) -> StepProgress:
        """The step bookkeeping of `trial`'s latest attempt, or of the run outside trials (lock held)."""
        if trial is None:
            return self._steps
        steps = self._trial_steps.get(trial)
        if steps is None:
            steps = self._trial_steps[trial] = StepProgress(self._step_interval_s, self._steps.total_steps)
        return steps

    def _new_trial_attempt(self, trial: int) -> None:
        """Starts `trial`'s step bookkeeping afresh, for its `trial.started` (lock held)."""
        self._lines.flush_pending()  # before its bookkeeping is replaced
        self._trial_steps[trial] = StepProgress(self._step_interval_s, self._steps.total_steps)

    def eval(
        self,
        step: int,
        metrics: Mapping[str, Any] | None = None,
        *,
        epoch: float | None = None,
        split: str = "eval",
        trial: int | None = None,
    ) -> None:
        """Writes `eval.completed`."""
        payload = eval_payload(self._args, step, metrics, epoch, split)
        if payload is not None:
            self._emit_active("eval.completed", self._stamped(payload, self._trial_for("eval.completed", trial)))

    def checkpoint(self, step: int, path: PathLike, reason: str = "periodic", *, trial: int | None = None) -> None:
        """Writes `checkpoint.saved`; `path` is made relative to the output directory.

        A path outside the output directory is not written: the event is dropped with
        a WARNING (writer rule 9).
        """
        payload = checkpoint_payload(self._args, self._output_dir, step, path, reason) if self._active else None
        if payload is not None:
            self._emit_active("checkpoint.saved", self._stamped(payload, self._trial_for("checkpoint.saved", trial)))
