"""Keras 3 integration: a callback for `model.fit`, on any backend (tested with torch).

```python
from trainwire.integrations.keras import attach

callback = attach(model, output_dir="runs/exp-1", signals=True)  # every model.fit writes the stream
model.fit(x, y, epochs=3, validation_split=0.2)
callback.raise_if_stopped()
```

What it maps: `on_train_begin` -> `run.started` (config = `model.fit`'s parameters and the
optimizer's) and `phase.started train`; each batch -> `train.step` (step = the optimizer's
`iterations`, loss and the other logged values, the learning rate); a completed epoch ->
`train.epoch`, and its `val_` values -> `eval.completed` (split `validation`); every
`model.save` / `model.save_weights` (`ModelCheckpoint`'s included) -> `checkpoint.saved`;
each batch of the validation inside `fit` -> a phase `eval` nested in `train` counting its
batches (`phase.progress`), and each batch of a `model.evaluate` / `model.predict` given the
callback while the run is open (the caller's run) -> a phase `eval` / `predict` likewise;
each step carries `memory` (CUDA devices in use, else the process's peak resident memory);
`on_train_end` -> `phase.ended train` and `run.finished`. No Keras hook sees an exception:
`attach` wraps `model.fit`, so a failure or Ctrl+C ends the run `failed` or `interrupted`.
A stop (control file, signal) saves `checkpoints/stop-step=N.keras` and sets
`model.stop_training`: `fit` returns and the run ends `interrupted`.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from trainwire.extras import require_extra

require_extra("keras")  # `pip install 'trainwire[keras]'` named, in place of a bare ImportError

import keras  # noqa: E402

from trainwire.integrations.core.hooks import number, shielded  # noqa: E402
from trainwire.integrations.core.lifecycle import Lifecycle, LifecycleAdapter, chosen_stop, owned_run  # noqa: E402
from trainwire.integrations.core.loop_progress import LoopProgress  # noqa: E402
from trainwire.integrations.core.memory_probe import step_memory  # noqa: E402
from trainwire.stop import StopControl  # noqa: E402
from trainwire.writer.run import Run  # noqa: E402

__all__ = ["STOP_CHECKPOINT", "TrainwireCallback", "attach"]

#: the file a stop saves, in the run's output directory (`{step}` is the optimizer's step)
STOP_CHECKPOINT = "checkpoints/stop-step={step}.keras"
_VALIDATION_PREFIX = "val_"
_NOT_METRICS = frozenset({"loss", "learning_rate"})
_WRAPPED_MARK = "__trainwire_wrapped__"
_ATTACHED = "_trainwire_callback"  # on the model: the callback attach() made
_SAVING = "_trainwire_saving"  # on the model: the callback of the fit under way


class TrainwireCallback(keras.callbacks.Callback, LifecycleAdapter):  # type: ignore[misc]
    """Writes a Keras model's `fit` to a trainwire `Run` and honours cooperative stops.

    Prefer `attach()`: it adds the callback to every `model.fit` and reports an exception
    (which no Keras hook sees). Without `run`, the callback owns one writing
    `<output_dir>/progress.jsonl` (the current directory by default), one run per `fit`.
    With the caller's `run` the callback opens and closes the `train` phase; the caller
    finishes the run. `stop`, `signals` and `sync_every_steps` are those of the other
    integrations (docs/integrations.md).
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
        super().__init__()
        owns_run = run is None
        new_run: Callable[[], Run] | None = None
        directory = Path(output_dir if output_dir is not None else ".")
        if run is None:
            run, new_run = owned_run(directory, **run_options)
        control = chosen_stop(stop, run, zero=True, directory=directory, check_interval_s=check_interval_s)
        self.lifecycle = Lifecycle(
            run,
            stop=control,
            owns_run=owns_run,
            sync_every_steps=sync_every_steps,
            signals=signals,
            new_run=new_run,
        )
        self._directory = directory
        self._failed_hooks: set[str] = set()
        self._loop = LoopProgress()

    # -- Keras hooks ----------------------------------------------------------------------

    @shielded
    def on_train_begin(self, logs: Mapping[str, Any] | None = None) -> None:
        object.__setattr__(self.model, _SAVING, self)  # the callback the saves announce to
        _wrap_saves(self.model)
        self.lifecycle.begin_train(self._step(), total_steps=self._total_steps(), start=self._start_run)

    def on_train_batch_end(self, batch: int, logs: Mapping[str, Any] | None = None) -> None:
        step = self._step()
        self._report_step(step, logs or {})
        if self.lifecycle.decide_stop(step) is not None:
            path = self._output_dir() / STOP_CHECKPOINT.format(step=step)
            path.parent.mkdir(parents=True, exist_ok=True)
            self.model.save(path)
            self.lifecycle.stop_checkpoint = path
            self.model.stop_training = True

    @shielded
    def on_epoch_end(self, epoch: int, logs: Mapping[str, Any] | None = None) -> None:
        run, logs = self.run, logs or {}
        if run is None:
            return
        step = self._step()
        validation = {
            name[len(_VALIDATION_PREFIX) :]: value
            for name, value in logs.items()
            if name.startswith(_VALIDATION_PREFIX)
        }
        if validation:
            run.eval(step, validation, epoch=epoch + 1, split="validation")
        if not self.stopped:  # a stop leaves the epoch unfinished
            training = {name: value for name, value in logs.items() if not name.startswith(_VALIDATION_PREFIX)}
            run.epoch(epoch + 1, step, metrics=training)
        self.lifecycle.poll_stop()
        if self.stopped:
            self.model.stop_training = True

    @shielded
    def on_test_batch_end(self, batch: int, logs: Mapping[str, Any] | None = None) -> None:
        self._batch_done("eval")

    @shielded
    def on_test_end(self, logs: Mapping[str, Any] | None = None) -> None:
        self._loop.end()

    @shielded
    def on_predict_batch_end(self, batch: int, logs: Mapping[str, Any] | None = None) -> None:
        self._batch_done("predict")

    @shielded
    def on_predict_end(self, logs: Mapping[str, Any] | None = None) -> None:
        self._loop.end()

    @shielded
    def on_train_end(self, logs: Mapping[str, Any] | None = None) -> None:
        self.lifecycle.end_train()
        self.lifecycle.finish()

    # -- called by the fit wrapper and the save wrapper -------------------------------------

    def _fit_failed(self, error: BaseException) -> None:
        self._loop.end("interrupted" if isinstance(error, KeyboardInterrupt) else "failed")
        self.lifecycle.fail(error)

    def _checkpoint_saved(self, path: str | os.PathLike[str]) -> None:
        if self.run is not None and self.lifecycle.in_train:
            self.run.checkpoint(self._step(), Path(path).absolute(), "stop" if self.stopped else "periodic")

    # -- internals ------------------------------------------------------------------------

    @shielded
    def _report_step(self, step: int, logs: Mapping[str, Any]) -> None:
        if self.run is None:
            return
        steps_per_epoch = self.params.get("steps")
        self.run.step(
            step,
            total_steps=self._total_steps(),
            loss=number(logs.get("loss")),
            learning_rate=_learning_rate(self.model),
            metrics={name: value for name, value in logs.items() if name not in _NOT_METRICS} or None,
            epoch=step / steps_per_epoch if steps_per_epoch else None,
            memory=step_memory(),
        )

    def _batch_done(self, phase: str) -> None:
        """A batch of a validation, evaluation or prediction loop, counted in the open run."""
        run = self.run
        if run is None or not run.started or run.status is not None:
            return  # a loop outside any open run writes nothing
        self._loop.batch_done(run, phase, self._planned_batches())

    def _planned_batches(self) -> int | None:
        if self.lifecycle.in_train:  # fit's validation: its own iterator knows, params are fit's
            iterator = getattr(self.model, "_eval_epoch_iterator", None)
            count = getattr(iterator, "num_batches", None)
        else:
            count = self.params.get("steps") if isinstance(self.params, Mapping) else None
        return count if isinstance(count, int) and count >= 0 else None

    def _start_run(self, run: Run) -> None:
        optimizer = self.model.optimizer
        config: dict[str, Any] = {
            name: value for name, value in self.params.items() if isinstance(value, (int, float, str, bool))
        }
        if optimizer is not None:
            config["optimizer"] = {
                name: value
                for name, value in optimizer.get_config().items()
                if isinstance(value, (int, float, str, bool))
            }
        run.start(total_steps=self._total_steps(), total_epochs=self.params.get("epochs"), config=config)

    def _step(self) -> int:
        optimizer = self.model.optimizer
        return int(keras.ops.convert_to_numpy(optimizer.iterations)) if optimizer is not None else 0

    def _total_steps(self) -> int | None:
        epochs, steps = self.params.get("epochs"), self.params.get("steps")
        return int(epochs * steps) if epochs and steps else None

    def _output_dir(self) -> Path:
        written = self.run.output_dir if self.run is not None else None
        return Path(written) if written else self._directory


def attach(model: keras.Model, run: Run | None = None, **options: Any) -> TrainwireCallback:
    """Make every `model.fit` write the trainwire stream; returns the callback.

    `model.fit` is wrapped (once): the callback joins its `callbacks`, and an exception
    out of `fit` ends the train phase (and an owned run) as `failed`, or `interrupted` for
    Ctrl+C. `options` are `TrainwireCallback`'s (`output_dir`, `stop`, `signals`, ...) and
    the owned run's.
    """
    callback = TrainwireCallback(run, **options)
    object.__setattr__(model, _ATTACHED, callback)  # plain attribute: Keras tracks none of it
    fit: Callable[..., Any] = model.fit
    if not getattr(fit, _WRAPPED_MARK, False):
        object.__setattr__(model, "fit", _wrapped_fit(model, fit))
    return callback


def _wrapped_fit(model: keras.Model, original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def fit(*args: Any, **kwargs: Any) -> Any:
        callback: TrainwireCallback = getattr(model, _ATTACHED)
        callbacks = list(kwargs.pop("callbacks", None) or [])
        if not any(isinstance(other, TrainwireCallback) for other in callbacks):
            callbacks.append(callback)
        try:
            return original(*args, callbacks=callbacks, **kwargs)
        except BaseException as error:
            callback._fit_failed(error)
            raise

    setattr(fit, _WRAPPED_MARK, True)
    return fit


def _wrap_saves(model: keras.Model) -> None:
    """Wrap `model.save` and `model.save_weights` (once): every save, by `ModelCheckpoint`,
    a stop or the user during `fit`, is announced with its path after the file is written."""
    for name in ("save", "save_weights"):
        original: Callable[..., Any] = getattr(model, name)
        if getattr(original, _WRAPPED_MARK, False):
            continue
        object.__setattr__(model, name, _announcing(model, original))


def _announcing(model: keras.Model, original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def save(filepath: str | os.PathLike[str], *args: Any, **kwargs: Any) -> Any:
        result = original(filepath, *args, **kwargs)
        callback: TrainwireCallback | None = getattr(model, _SAVING, None)
        if callback is not None:
            callback._checkpoint_saved(filepath)
        return result

    setattr(save, _WRAPPED_MARK, True)
    return save


def _learning_rate(model: keras.Model) -> float | None:
    optimizer = model.optimizer
    return number(keras.ops.convert_to_numpy(optimizer.learning_rate)) if optimizer is not None else None
