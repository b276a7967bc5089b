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
from trainwire.writer.run_core import RunCore
from trainwire.writer.values import BAD, integer

__all__ = ["TrainingEvents"]


class TrainingEvents:
    """The events of training itself, each for the thread's trial unless given one; each
    method is `Run`'s of the same name, documented there."""

    def __init__(self, core: RunCore) -> None:
        self._core = core

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
        core = self._core
        if not core.active:
            return
        if trial is None:
            scopes = core.scopes.trials  # inline: the per-step path
            trial = scopes[-1] if scopes else None
            if trial is not None:
                core.open_scope()  # the trial's start (a late trial.started) before its first step
        else:
            trial = core.args.trial("train.step", trial)
        with core.lock:
            if (core.finished or not core.started) and not core.ready("train.step"):
                return
            if type(step) is not int or step < 0:  # the common case costs one check
                checked_step = integer(step)
                if not isinstance(checked_step, int):
                    core.complain("train.step.step", f"step {step!r} is not an integer >= 0; train.step not written")
                    return
                step = checked_step
            now = core.monotonic()
            steps = core.steps if trial is None else core.steps_for(trial)
            core.last_step = step
            if total_steps is not UNSET:
                total = integer(total_steps)
                if total is BAD:
                    core.complain(
                        "train.step.total_steps", f"total_steps={total_steps!r} is not an integer >= 0; ignored"
                    )
                else:
                    steps.total_steps = total
            elapsed, eta, progress, due = steps.report(step, now)
            line = core.step_envelope.copy()
            line["step"] = step
            line["total_steps"] = steps.total_steps
            # plain floats and None (the common case) go straight in
            line["epoch"] = epoch if epoch is None else core.args.number("train.step", "epoch", epoch, 0)
            line["loss"] = loss if loss is None or type(loss) is float else core.args.number("train.step", "loss", loss)
            line["learning_rate"] = (
                learning_rate
                if learning_rate is None or type(learning_rate) is float
                else core.args.number("train.step", "learning_rate", learning_rate)
            )
            if grad_norm is not UNSET:
                line["grad_norm"] = core.args.number("train.step", "grad_norm", grad_norm)
            line["elapsed_s"] = elapsed
            line["eta_s"] = eta
            line["progress"] = progress
            if samples_per_s is not UNSET:
                line["samples_per_s"] = core.args.number("train.step", "samples_per_s", samples_per_s, 0)
            if tokens_per_s is not UNSET:
                line["tokens_per_s"] = core.args.number("train.step", "tokens_per_s", tokens_per_s, 0)
            if tokens_seen is not UNSET:
                line["tokens_seen"] = core.args.optional_int("train.step", "tokens_seen", tokens_seen)
            if metrics is not None:
                line["metrics"] = clean_metrics(metrics, core.complain)
            if memory is not None:
                devices = device_memory(memory, core.complain)
                if devices is not None:
                    line["memory"] = devices
            if trial is not None:
                line["trial"] = trial
            if due:
                core.lines.write_fresh(line, steps)  # the trial's pending step, if any, is superseded
            else:
                core.lines.hold(line, now, steps)

    def epoch(
        self, epoch: int, step: int, metrics: Mapping[str, Any] | None = None, *, trial: int | None = None
    ) -> None:
        core = self._core
        counted = core.args.counts("train.epoch", epoch=(epoch, 1), step=(step, 0))
        if counted is not None:
            payload = {**counted, "metrics": clean_metrics(metrics, core.complain)}
            core.emit_active("train.epoch", core.stamped(payload, core.trial_for("train.epoch", trial)))

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
        core = self._core
        if not core.active:
            return
        trial = core.trial_for("train.restarted", trial)
        with core.lock:
            counted = core.ready("train.restarted") and core.args.counts("train.restarted", step=(step, 0))
            if not counted:
                return
            reason = restart_reason(core.args, reason)
            step = counted["step"]
            core.lines.flush_pending()
            steps = core.steps_for(trial)
            attempt, previous_step = steps.restart(step)
            core.last_step = step  # the new attempt starts there, as run.finished and the heartbeat say
            payload: dict[str, Any] = {
                "reason": reason,
                "attempt": attempt,
                "previous_step": previous_step,
                "step": step,
            }
            payload.update(restart_sizes(core.args, batch_size_from, batch_size_to))
            if total_steps is not UNSET:
                payload["total_steps"] = steps.total_steps = core.args.optional_int(
                    "train.restarted", "total_steps", total_steps
                )
            core.emit("train.restarted", core.stamped(payload, trial))

    def rolled_back(
        self,
        previous_step: int,
        step: int,
        *,
        checkpoint: PathLike | None = None,
        reason: str | None = None,
        trial: int | None = None,
    ) -> None:
        core = self._core
        if not core.active:
            return
        trial = core.trial_for("train.rolled_back", trial)
        payload = rolled_back_payload(core.args, core.output_dir, previous_step, step, checkpoint, reason)
        if payload is None:
            return
        with core.lock:
            if not core.ready("train.rolled_back"):
                return
            core.lines.flush_pending()
            core.steps_for(trial).roll_back(payload["step"])
            core.last_step = payload["step"]
            core.emit("train.rolled_back", core.stamped(payload, trial))

    def eval(
        self,
        step: int,
        metrics: Mapping[str, Any] | None = None,
        *,
        epoch: float | None = None,
        split: str = "eval",
        trial: int | None = None,
    ) -> None:
        core = self._core
        payload = eval_payload(core.args, step, metrics, epoch, split)
        if payload is not None:
            core.emit_active("eval.completed", core.stamped(payload, core.trial_for("eval.completed", trial)))

    def checkpoint(self, step: int, path: PathLike, reason: str = "periodic", *, trial: int | None = None) -> None:
        core = self._core
        payload = checkpoint_payload(core.args, core.output_dir, step, path, reason) if core.active else None
        if payload is not None:
            core.emit_active("checkpoint.saved", core.stamped(payload, core.trial_for("checkpoint.saved", trial)))
