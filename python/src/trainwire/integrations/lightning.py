"""PyTorch Lightning integration: a `Callback` that writes the trainwire stream.

```python
from trainwire.integrations.lightning import TrainwireCallback

callback = TrainwireCallback(signals=True)   # owns a Run writing <default_root_dir>/progress.jsonl
trainer = lightning.Trainer(default_root_dir="runs/exp-1", callbacks=[callback])
trainer.fit(model, data)
callback.raise_if_stopped()                  # a honoured stop skips whatever promotes the model
```

What it maps: `on_train_start` -> `run.started` (when it owns the run) and `phase.started
train`; a new `fit` after an out-of-memory error, or from an earlier step -> `train.restarted`;
each optimizer step -> `train.step`; a completed epoch -> `train.epoch`; validation ->
`eval.completed`; every `trainer.save_checkpoint` (the `ModelCheckpoint` callback's too) ->
`checkpoint.saved`; `on_train_end` -> `phase.ended train`; the end of `fit` -> `run.finished`.

Signals: Lightning installs its own SIGTERM handler during `fit` (it raises
`SIGTERMException` after the current batch, without a checkpoint). When trainwire handles
signals (`signals=True`, or a `StopControl` whose handlers are installed), the callback hands
SIGTERM back to trainwire for the rest of `fit`: the step finishes, a checkpoint is saved and
`fit` returns, `interrupted`. Lightning restores the handlers when `fit` ends. Without
trainwire's handlers Lightning's own SIGTERM path stays and the run ends `interrupted`
(`sigterm`) without a checkpoint. See docs/integrations.md.
"""

from __future__ import annotations

import functools
import math
import os
import signal
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import lightning.pytorch as pl
from lightning.pytorch.utilities.exceptions import SIGTERMException

from trainwire.contract.status import status_for_exception
from trainwire.integrations.distributed import agreed_stop, is_distributed
from trainwire.integrations.hooks import StopOutcome, number, shielded
from trainwire.stop import StopControl, StopRequest
from trainwire.writer.fields import UNSET
from trainwire.writer.run import Run

__all__ = ["CHECKPOINT_KEY", "STOP_CHECKPOINT", "TrainwireCallback"]

#: where a checkpoint carries the run id and step it was saved at (for `resumed_from`)
CHECKPOINT_KEY = "trainwire"
#: the file a stop saves, in the run's output directory (`{step}` is the global step)
STOP_CHECKPOINT = "checkpoints/stop-step={step}.ckpt"
_VALIDATION_PREFIXES = ("val_", "val/")
_WRAPPED_MARK = "__trainwire_wrapped__"


class TrainwireCallback(pl.Callback, StopOutcome):
    """Writes a Lightning `Trainer`'s progress to a trainwire `Run` and honours cooperative stops.

    Without `run`, the callback owns one: a `Run(output_dir or trainer.default_root_dir,
    **run_options)` made at `setup` on global rank 0, started at `on_train_start` and finished
    when `fit` ends. With the caller's `run`, the callback opens and closes the `train` phase
    (and writes `run.started` if the caller has not); the caller finishes the run. `stop=True`
    watches the control file in the run's output directory (a `StopControl` may be passed
    instead); `signals=True` maps SIGINT/SIGTERM to a graceful stop during `fit`. In a
    distributed job every rank takes part in the stop decision every `sync_every_steps` steps.
    """

    def __init__(
        self,
        run: Run | None = None,
        *,
        output_dir: str | os.PathLike[str] | None = None,
        stop: bool | StopControl = True,
        signals: bool = False,
        check_interval_s: float = 0.25,
        sync_every_steps: int = 1,
        **run_options: Any,
    ) -> None:
        self.run = run
        self.owns_run = run is None
        self.stop: StopControl | None = stop if isinstance(stop, StopControl) else None
        self._watch_file = stop is True
        self._signals = signals
        self._check_interval_s = check_interval_s
        self._output_dir = output_dir
        self._run_options = run_options
        # Every rank reduces the stop flag on the same steps: a fixed cadence, never a clock.
        self.sync_every_steps = max(1, sync_every_steps)
        self._stop_request: StopRequest | None = None
        self._train_phase_open = False
        self._last_reported_step: int | None = None
        self._failed_out_of_memory = False
        self._origin: Mapping[str, Any] | None = None
        self._failed_hooks: set[str] = set()

    # -- Lightning hooks: set-up ----------------------------------------------------------

    def setup(self, trainer: pl.Trainer, pl_module: pl.LightningModule, stage: str) -> None:
        zero = trainer.is_global_zero
        if self.run is None and self.owns_run and zero:
            directory = self._output_dir if self._output_dir is not None else trainer.default_root_dir
            self.run = Run(directory, rank=0, **self._run_options)
        if not zero:
            self.run = None  # only global rank 0 writes, whoever made the run
        if self.stop is None and self._watch_file:
            # Only rank 0 watches (and clears) the file; the others learn of it through the reduce.
            watched = self.run.output_dir if self.run is not None else None
            self.stop = StopControl(watched, run=self.run, check_interval_s=self._check_interval_s)
        _wrap_save_checkpoint(trainer)

    def on_load_checkpoint(
        self, trainer: pl.Trainer, pl_module: pl.LightningModule, checkpoint: dict[str, Any]
    ) -> None:
        origin = checkpoint.get(CHECKPOINT_KEY)
        self._origin = origin if isinstance(origin, Mapping) else None

    def on_save_checkpoint(
        self, trainer: pl.Trainer, pl_module: pl.LightningModule, checkpoint: dict[str, Any]
    ) -> None:
        if self.run is not None:
            checkpoint[CHECKPOINT_KEY] = {"run_id": self.run.run_id, "step": trainer.global_step}

    @shielded
    def on_train_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        self._take_signals()
        self._stop_request = None
        run = self.run
        if run is None:
            return
        step = trainer.global_step
        if not run.started:
            self._start_run(run, trainer, pl_module)
        elif self._failed_out_of_memory or (run.last_step is not None and step < run.last_step):
            run.restarted(
                "oom" if self._failed_out_of_memory else "other", step=step, total_steps=_total_steps(trainer)
            )
        self._failed_out_of_memory = False
        self._last_reported_step = step
        if not self._train_phase_open:
            run.phase_started("train")
            self._train_phase_open = True

    # -- Lightning hooks: training --------------------------------------------------------

    def on_train_batch_end(
        self, trainer: pl.Trainer, pl_module: pl.LightningModule, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        self._report_step(trainer, outputs, batch_idx)
        if self.stop is None or self._stop_request is not None:
            return
        if is_distributed() and trainer.global_step % self.sync_every_steps:
            return  # every rank skips the same steps
        found = agreed_stop(self.stop)
        if found is not None:
            self._stop_request = found
            # Every rank saves (the strategy writes on rank 0 and keeps the ranks together).
            trainer.save_checkpoint(self._stop_checkpoint_path(trainer))
            trainer.should_stop = True

    @shielded
    def on_train_epoch_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        # A stop or `max_steps` mid-epoch still ends the epoch loop: only a completed
        # epoch (its last batch trained, no stop) is an event.
        completed = trainer.fit_loop.epoch_loop.batch_progress.is_last_batch
        if self.run is None or self._stop_request is not None or not completed:
            return
        self.run.epoch(trainer.current_epoch + 1, trainer.global_step)

    @shielded
    def on_validation_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        if self.run is None or trainer.sanity_checking:
            return
        metrics = {
            _without_prefix(name): value
            for name, value in trainer.callback_metrics.items()
            if name.startswith(_VALIDATION_PREFIXES)
        }
        self.run.eval(trainer.global_step, metrics, epoch=trainer.current_epoch, split="validation")

    @shielded
    def on_train_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        self._close_train_phase("interrupted" if self.stopped else "ok")

    @shielded
    def on_fit_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        run = self.run
        if run is None or not self.owns_run or run.status is not None:
            return
        if self._stop_request is not None:
            run.finish("interrupted", reason=self._stop_request.finish_reason)
        else:
            run.finish("succeeded")

    @shielded
    def on_exception(self, trainer: pl.Trainer, pl_module: pl.LightningModule, exception: BaseException) -> None:
        self._failed_out_of_memory = _is_out_of_memory(exception)
        run = self.run
        if run is None or run.status is not None:
            return
        if isinstance(exception, SIGTERMException):
            # Lightning's own SIGTERM path (trainwire's handlers were not in force): a stop
            # without a checkpoint. A SystemExit would otherwise read as a success, so the
            # callback ends the run here, whoever owns it.
            if not run.stop_reason:
                run.stop_requested("signal", signal="SIGTERM")
            self._close_train_phase("interrupted")
            run.finish("interrupted", reason="sigterm")
            return
        interrupted = status_for_exception(exception) == "interrupted"
        self._close_train_phase("interrupted" if interrupted else "failed")
        if self.owns_run:
            run.finish_for(exception)

    # -- internals ------------------------------------------------------------------------

    def _take_signals(self) -> None:
        """Hand SIGTERM (and SIGINT) to trainwire's stop for the rest of `fit`.

        Runs after Lightning registered its handlers, which it restores when `fit` ends;
        so trainwire's own handlers, installed here, are gone with it too.
        """
        if self.stop is None or threading.current_thread() is not threading.main_thread():
            return
        if self._signals and self.owns_run:
            self.stop.install_signal_handlers()
        if self.stop.handles_signals:
            signal.signal(signal.SIGTERM, self.stop.handle_signal)

    @shielded
    def _report_step(self, trainer: pl.Trainer, outputs: Any, batch_idx: int) -> None:
        step = trainer.global_step
        # With gradient accumulation several batches end on one optimizer step.
        if self.run is None or step == self._last_reported_step:
            return
        self._last_reported_step = step
        loss = outputs.get("loss") if isinstance(outputs, Mapping) else outputs
        metrics = {
            name: value for name, value in trainer.logged_metrics.items() if not name.startswith(_VALIDATION_PREFIXES)
        }
        self.run.step(
            step,
            total_steps=_total_steps(trainer),
            epoch=_epoch(trainer, batch_idx),
            loss=number(loss),
            learning_rate=_learning_rate(trainer),
            metrics=metrics or None,
        )

    def _start_run(self, run: Run, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        resumed_from: Any = UNSET
        if trainer.global_step > 0:
            origin = self._origin or {}
            resumed_from = {
                "run_id": origin.get("run_id") if isinstance(origin.get("run_id"), str) else None,
                "checkpoint": trainer.ckpt_path,
                "step": trainer.global_step,
            }
        unbounded_steps = trainer.max_steps is None or trainer.max_steps < 0
        run.start(
            total_steps=_total_steps(trainer),
            total_epochs=trainer.max_epochs if unbounded_steps and trainer.max_epochs not in (None, -1) else UNSET,
            config=dict(pl_module.hparams) if pl_module.hparams else None,
            world_size=trainer.world_size,
            resumed_from=resumed_from,
        )

    def _stop_checkpoint_path(self, trainer: pl.Trainer) -> str:
        base = self.run.output_dir if self.run is not None else trainer.default_root_dir
        return str(Path(base or ".") / STOP_CHECKPOINT.format(step=trainer.global_step))

    def _close_train_phase(self, status: str) -> None:
        if self._train_phase_open and self.run is not None:
            self.run.phase_ended("train", status=status)
        self._train_phase_open = False

    def _checkpoint_saved(self, trainer: pl.Trainer, path: str | os.PathLike[str]) -> None:
        if self.run is not None:
            self.run.checkpoint(trainer.global_step, Path(path).absolute(), "stop" if self.stopped else "periodic")


def _wrap_save_checkpoint(trainer: pl.Trainer) -> None:
    """Wrap `trainer.save_checkpoint` (once): every save, by `ModelCheckpoint`, a stop or the
    user, is announced with its path after the file is written."""
    original: Callable[..., Any] = trainer.save_checkpoint
    if getattr(original, _WRAPPED_MARK, False):
        return

    @functools.wraps(original)
    def save_checkpoint(filepath: str | os.PathLike[str], *args: Any, **kwargs: Any) -> Any:
        result = original(filepath, *args, **kwargs)
        for callback in getattr(trainer, "callbacks", ()):  # typed on the Trainer only through a mixin
            if isinstance(callback, TrainwireCallback):
                callback._checkpoint_saved(trainer, filepath)
        return result

    setattr(save_checkpoint, _WRAPPED_MARK, True)
    trainer.save_checkpoint = save_checkpoint  # type: ignore[method-assign]


def _total_steps(trainer: pl.Trainer) -> int | None:
    total = trainer.estimated_stepping_batches
    return int(total) if isinstance(total, (int, float)) and math.isfinite(total) else None


def _epoch(trainer: pl.Trainer, batch_idx: int) -> float:
    batches = trainer.num_training_batches
    if isinstance(batches, (int, float)) and math.isfinite(batches) and batches > 0:
        return trainer.current_epoch + min(1.0, (batch_idx + 1) / batches)
    return float(trainer.current_epoch)


def _learning_rate(trainer: pl.Trainer) -> float | None:
    optimizers = trainer.optimizers
    if not optimizers or not optimizers[0].param_groups:
        return None
    return number(optimizers[0].param_groups[0].get("lr"))


def _without_prefix(name: str) -> str:
    for prefix in _VALIDATION_PREFIXES:
        if name.startswith(prefix):
            return name[len(prefix) :]
    return name


def _is_out_of_memory(error: BaseException) -> bool:
    import torch

    return isinstance(error, torch.OutOfMemoryError) or "out of memory" in str(error).lower()
