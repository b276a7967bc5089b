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
A `validate`, `test` or `predict` outside `fit` is a run of its own (an owned run): its loop
an `eval` or `predict` phase counting batches, its values `eval.completed`, its end
`run.finished`. One trainwire callback writes per trainer: a second one warns and writes nothing.

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
import logging
import math
import os
import signal
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from trainwire.extras import require_extra

require_extra("lightning")  # `pip install 'trainwire[lightning]'` named, in place of a bare ImportError

import lightning.pytorch as pl  # noqa: E402
from lightning.pytorch.utilities.exceptions import SIGTERMException  # noqa: E402

from trainwire.integrations.core.hooks import number, shielded  # noqa: E402
from trainwire.integrations.core.lifecycle import Lifecycle, LifecycleAdapter, owned_run, watched_stop  # noqa: E402
from trainwire.integrations.core.loop_progress import LoopProgress  # noqa: E402
from trainwire.integrations.core.memory_probe import step_memory  # noqa: E402
from trainwire.integrations.lightning.logger import VALIDATION_PREFIXES, TrainwireLogger  # noqa: E402
from trainwire.stop import StopControl  # noqa: E402
from trainwire.writer.fields import UNSET  # noqa: E402
from trainwire.writer.run import Run  # noqa: E402

__all__ = ["CHECKPOINT_KEY", "STOP_CHECKPOINT", "TrainwireCallback"]

#: where a checkpoint carries the run id and step it was saved at (for `resumed_from`)
CHECKPOINT_KEY = "trainwire"
#: the file a stop saves, in the run's output directory (`{step}` is the global step)
STOP_CHECKPOINT = "checkpoints/stop-step={step}.ckpt"
_WRAPPED_MARK = "__trainwire_wrapped__"
#: the loop phase and the eval split of each trainer function outside `fit`
_LOOPS = {"validate": ("eval", "validation"), "test": ("eval", "test"), "predict": ("predict", None)}
_TEST_PREFIXES = ("test_", "test/")

logger = logging.getLogger("trainwire.integrations.lightning")


class TrainwireCallback(pl.Callback, LifecycleAdapter):
    """Writes a Lightning `Trainer`'s progress to a trainwire `Run` and honours cooperative stops.

    Without `run`, the callback owns one: a `Run(output_dir or trainer.default_root_dir,
    **run_options)` made at `setup` on global rank 0, started at `on_train_start` and finished
    when `fit` ends. With the caller's `run`, the callback opens and closes the `train` phase
    (and writes `run.started` if the caller has not); the caller finishes the run. `stop=True`
    watches the control file in the run's output directory (a `StopControl` may be passed
    instead); `signals=True` maps SIGINT/SIGTERM to a graceful stop during `fit`. In a
    distributed job every rank takes part in the stop decision every `sync_every_steps` steps.
    An owned run covers one `fit`: a later `fit` after it ended is a new run in the same file.
    The run's lifecycle is `self.lifecycle`; the hooks map Lightning's events onto it.
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
        self.lifecycle = Lifecycle(
            run,
            stop=stop if isinstance(stop, StopControl) else None,
            owns_run=run is None,
            sync_every_steps=sync_every_steps,
        )
        self._watch_file = stop is True
        self._signals = signals
        self._check_interval_s = check_interval_s
        self._output_dir = output_dir
        self._run_options = run_options
        self._last_reported_step: int | None = None
        self._origin: Mapping[str, Any] | None = None
        self._failed_hooks: set[str] = set()
        self._loop = LoopProgress()
        self._logger: TrainwireLogger | None = None  # the trainer's trainwire logger, found at setup

    # -- Lightning hooks: set-up ----------------------------------------------------------

    def setup(self, trainer: pl.Trainer, pl_module: pl.LightningModule, stage: str) -> None:
        callbacks = getattr(trainer, "callbacks", ())  # typed on the Trainer only through a mixin
        first = next(each for each in callbacks if isinstance(each, TrainwireCallback))
        if first is not self:
            # Two runs would interleave in one file: the first trainwire callback writes.
            logger.warning("trainwire: a second TrainwireCallback in one Trainer writes nothing; pass one")
            self.lifecycle = Lifecycle(None)
            self._watch_file = False
            return
        zero = trainer.is_global_zero
        lifecycle = self.lifecycle
        self._logger = next((each for each in trainer.loggers if isinstance(each, TrainwireLogger)), None)
        if lifecycle.run is None and lifecycle.owns_run and zero:
            if self._logger is not None and self._output_dir is None:
                lifecycle.run, lifecycle.new_run = self._logger.lend_run()  # one run for both
            else:
                directory = self._output_dir if self._output_dir is not None else trainer.default_root_dir
                lifecycle.run, lifecycle.new_run = owned_run(directory, rank=0, **self._run_options)
        if self._logger is not None:
            self._logger.joined = True  # from here the callback writes what the logger is given
        if not zero:
            lifecycle.run = None  # only global rank 0 writes, whoever made the run
        if lifecycle.stop is None and self._watch_file:
            lifecycle.stop = watched_stop(lifecycle.run, zero=zero, check_interval_s=self._check_interval_s)
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
        # Each fit asks the stop control again (which still holds a request it honoured).
        self.lifecycle.stop_request = None
        step = trainer.global_step
        self.lifecycle.begin_train(
            step,
            total_steps=_total_steps(trainer) if self.run is not None else None,
            start=lambda run: self._start_run(run, trainer, pl_module),
        )
        self._last_reported_step = step

    # -- Lightning hooks: training --------------------------------------------------------

    def on_train_batch_end(
        self, trainer: pl.Trainer, pl_module: pl.LightningModule, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        self._report_step(trainer, outputs, batch_idx)
        if self.lifecycle.decide_stop(trainer.global_step) is not None:
            # Every rank saves (the strategy writes on rank 0 and keeps the ranks together).
            path = self._stop_checkpoint_path(trainer)
            self.lifecycle.stop_checkpoint = Path(path).absolute()  # run.finished names it: resume from it
            trainer.save_checkpoint(path)
            trainer.should_stop = True

    @shielded
    def on_train_epoch_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        # A stop or `max_steps` mid-epoch still ends the epoch loop: only a completed
        # epoch (its last batch trained, no stop) is an event.
        completed = trainer.fit_loop.epoch_loop.batch_progress.is_last_batch
        if self.run is None or self.stopped or not completed:
            return
        self.run.epoch(trainer.current_epoch + 1, trainer.global_step)

    # -- Lightning hooks: validate, test and predict outside fit --------------------------

    @shielded
    def on_validation_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        if trainer.state.fn == "validate":
            self._begin_loop_run(trainer, pl_module)

    @shielded
    def on_test_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        self._begin_loop_run(trainer, pl_module)

    @shielded
    def on_predict_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        self._begin_loop_run(trainer, pl_module)

    @shielded
    def on_test_batch_end(self, trainer: pl.Trainer, *args: Any, **kwargs: Any) -> None:
        self._loop_batch_done(trainer, getattr(trainer, "num_test_batches", None))

    @shielded
    def on_predict_batch_end(self, trainer: pl.Trainer, *args: Any, **kwargs: Any) -> None:
        self._loop_batch_done(trainer, getattr(trainer, "num_predict_batches", None))

    @shielded
    def on_test_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        self._end_loop(trainer, "test", _TEST_PREFIXES)

    @shielded
    def on_predict_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        self._loop.end()

    @shielded
    def teardown(self, trainer: pl.Trainer, pl_module: pl.LightningModule, stage: str) -> None:
        if stage in _LOOPS:
            self.lifecycle.finish()  # the run of a validate, test or predict ends

    # -- Lightning hooks: validation during fit ---------------------------------------------

    @shielded
    def on_validation_batch_end(
        self,
        trainer: pl.Trainer,
        pl_module: pl.LightningModule,
        outputs: Any,
        batch: Any,
        batch_idx: int,
        dataloader_idx: int = 0,
    ) -> None:
        # the sanity check's few batches are not an evaluation; nor is one before the run starts
        if not trainer.sanity_checking:
            self._loop_batch_done(trainer, getattr(trainer, "num_val_batches", None))

    @shielded
    def on_validation_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        if not trainer.sanity_checking:
            self._end_loop(trainer, "validation", VALIDATION_PREFIXES)

    @shielded
    def on_train_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        self.lifecycle.end_train()

    @shielded
    def on_fit_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        self.lifecycle.finish()

    @shielded
    def on_exception(self, trainer: pl.Trainer, pl_module: pl.LightningModule, exception: BaseException) -> None:
        self._loop.end("failed")
        run = self.run
        if isinstance(exception, SIGTERMException) and run is not None and run.status is None:
            # Lightning's own SIGTERM path (trainwire's handlers were not in force): a stop
            # without a checkpoint. A SystemExit would otherwise read as a success, so the
            # callback ends the run here, whoever owns it.
            if not run.stop_reason:
                run.stop_requested("signal", signal="SIGTERM")
            self.lifecycle.close_train_phase("interrupted")
            run.finish("interrupted", reason="sigterm")
        self.lifecycle.fail(exception)

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
            name: value for name, value in trainer.logged_metrics.items() if not name.startswith(VALIDATION_PREFIXES)
        }
        self.run.step(
            step,
            total_steps=_total_steps(trainer),
            epoch=_epoch(trainer, batch_idx),
            loss=number(loss),
            learning_rate=_learning_rate(trainer),
            metrics=metrics or None,
            memory=step_memory(),
        )

    def _begin_loop_run(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        """A validate, test or predict outside fit: a run of its own (a new one after the last ended)."""
        self.lifecycle.renew()
        run = self.run
        if run is not None and run.status is None and not run.started:
            run.start(config=self._config(pl_module), world_size=trainer.world_size)

    def _loop_batch_done(self, trainer: pl.Trainer, planned: Any) -> None:
        run = self.run
        if run is None or not run.started or run.status is not None:
            return  # nothing before the run starts, nor after it ended
        phase = _LOOPS.get(str(trainer.state.fn.value if trainer.state.fn else ""), ("eval", None))[0]
        self._loop.batch_done(run, phase, _planned_batches(planned))

    def _end_loop(self, trainer: pl.Trainer, split: str, prefixes: tuple[str, ...]) -> None:
        """An evaluation ended: its values (the names with `prefixes`, taken off), then its phase."""
        run = self.run
        if run is not None and run.status is None:
            metrics = {
                _without_prefix(name, prefixes): value
                for name, value in trainer.callback_metrics.items()
                if name.startswith(prefixes)
            }
            run.eval(trainer.global_step, metrics, epoch=trainer.current_epoch, split=split)
        self._loop.end()

    def _config(self, pl_module: pl.LightningModule) -> dict[str, Any] | None:
        return {**pl_module.hparams, **(self._logger.hyperparameters if self._logger else {})} or None

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
            config=self._config(pl_module),
            world_size=trainer.world_size,
            resumed_from=resumed_from,
        )

    def _stop_checkpoint_path(self, trainer: pl.Trainer) -> str:
        base = self.run.output_dir if self.run is not None else trainer.default_root_dir
        return str(Path(base or ".") / STOP_CHECKPOINT.format(step=trainer.global_step))

    def _checkpoint_saved(self, trainer: pl.Trainer, path: str | os.PathLike[str]) -> None:
        if self.run is not None:
            saved = Path(path).absolute()
            # the stop's own checkpoint only: one ModelCheckpoint saves after a stop is not it
            reason = "stop" if self.stopped and saved == self.lifecycle.stop_checkpoint else "periodic"
            self.run.checkpoint(trainer.global_step, saved, reason)


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


def _without_prefix(name: str, prefixes: tuple[str, ...]) -> str:
    return next((name[len(prefix) :] for prefix in prefixes if name.startswith(prefix)), name)


def _planned_batches(counts: Any) -> int | None:
    """The batches of one pass over every loader of an evaluation, when all are known."""
    counts = counts or []
    if not all(isinstance(count, int) for count in counts):
        return None  # an unsized loader counts as infinity
    return sum(counts) or None
