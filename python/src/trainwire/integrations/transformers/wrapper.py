"""The wrapper around a transformers `Trainer`'s `train()`, `evaluate()`, `predict()` and
`hyperparameter_search()`: it tells the attached callback when `train()` (and which trial) or
an Optuna or Ray search starts, which loop (`eval`, `predict`) a batch
belongs to, and how each ends (an exception included, which no `TrainerCallback` hook
sees), and sends the trainer's printing to stderr while the stream goes to stdout."""

from __future__ import annotations

import contextlib
import functools
import inspect
import sys
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING, Any

from trainwire.writer.sinks import stdout_carries_stream

if TYPE_CHECKING:
    from transformers import Trainer

__all__ = ["calling_trainer", "wrap_trainer"]

_WRAPPED_MARK = "__trainwire_wrapped__"
_ATTACHED = "_trainwire_callback"  # on the trainer: the callback attach() added last
#: the Trainer's methods wrapped on the instance
_WRAPPED_METHODS = ("train", "evaluate", "predict", "hyperparameter_search")


def _current_callback(trainer: Trainer, kind: type[Any]) -> Any:
    return next((cb for cb in trainer.callback_handler.callbacks if isinstance(cb, kind)), None)


def calling_trainer(callback: Any, depth: int = 12) -> Trainer | None:
    """The `Trainer` whose method is calling `callback`'s hook, found in the calling frames.

    A callback passed by class is made by transformers, which hands it no trainer; the
    trainer is the `self` of a calling frame (its `__init__` at `on_init_end`) that holds
    the callback. Without it the callback still writes, but no hook sees an exception."""
    from transformers import Trainer

    frame: FrameType | None = sys._getframe(1)
    for _ in range(depth):
        if frame is None:
            return None
        candidate = frame.f_locals.get("self")
        handler = getattr(candidate, "callback_handler", None) if isinstance(candidate, Trainer) else None
        if handler is not None and callback in handler.callbacks:
            return candidate
        frame = frame.f_back
    return None


def _printing_off_stdout() -> contextlib.AbstractContextManager[Any]:
    """While the stream goes to stdout, whatever the trainer prints goes to stderr."""
    return contextlib.redirect_stdout(sys.stderr) if stdout_carries_stream() else contextlib.nullcontext()


def wrap_trainer(trainer: Trainer, callback: Any) -> None:
    """Remember `callback` as the one attached last, and wrap `trainer.train` and
    `trainer.evaluate` (once each) around whichever callback of its type is in the loop."""
    setattr(trainer, _ATTACHED, callback)
    train: Callable[..., Any] = trainer.train
    if not getattr(train, _WRAPPED_MARK, False):
        trainer.train = _wrapped_train(trainer, train, type(callback))
    for name, phase in (("evaluate", "eval"), ("predict", "predict")):
        loop: Callable[..., Any] = getattr(trainer, name)
        if not getattr(loop, _WRAPPED_MARK, False):
            setattr(trainer, name, _wrapped_loop(trainer, loop, type(callback), phase))
    search: Callable[..., Any] = trainer.hyperparameter_search
    if not getattr(search, _WRAPPED_MARK, False):
        trainer.hyperparameter_search = _wrapped_search(trainer, search, type(callback))


def _wrapped_search(trainer: Trainer, original: Callable[..., Any], kind: type[Any]) -> Callable[..., Any]:
    """`trainer.hyperparameter_search`: with the Optuna backend, the callback writes the
    search as one run whose trials are the study's; with Ray's, a `TuneSearch` on the
    driver writes Tune's trials into that run (`search_on_tune`); other backends are not
    followed."""
    from transformers.hyperparameter_search import default_hp_search_backend
    from transformers.trainer_utils import HPSearchBackend

    @functools.wraps(original)
    def search(*args: Any, **kwargs: Any) -> Any:
        bound = inspect.signature(original).bind(*args, **kwargs)
        bound.apply_defaults()
        backend = bound.arguments["backend"] or default_hp_search_backend()
        callback = _current_callback(trainer, kind)
        if callback is not None and HPSearchBackend(backend) == HPSearchBackend.RAY:
            from trainwire.integrations.transformers.tune_search import search_on_tune  # ray stays optional

            return search_on_tune(trainer, callback, original, bound, [*_WRAPPED_METHODS, _ATTACHED])
        if callback is None or HPSearchBackend(backend) != HPSearchBackend.OPTUNA:
            return original(*args, **kwargs)
        callback._search_begins(trainer, bound.arguments["n_trials"])
        try:
            result = original(*args, **kwargs)
        except BaseException as error:
            callback._search_ended(error)
            raise
        callback._search_ended(None)
        return result

    setattr(search, _WRAPPED_MARK, True)
    return search


def _wrapped_loop(trainer: Trainer, original: Callable[..., Any], kind: type[Any], phase: str) -> Callable[..., Any]:
    """`trainer.evaluate` or `trainer.predict`: the callback learns which loop its batches
    belong to (the `phase`) and how a loop that raised ended; the printing goes to stderr."""

    @functools.wraps(original)
    def loop(*args: Any, **kwargs: Any) -> Any:
        callback = _current_callback(trainer, kind)
        if callback is not None:
            callback._loop_begins(phase)
        try:
            with _printing_off_stdout():
                return original(*args, **kwargs)
        except BaseException as error:
            if callback is not None:
                callback._loop_failed(error)
            raise

    setattr(loop, _WRAPPED_MARK, True)
    return loop


def _wrapped_train(trainer: Trainer, original: Callable[..., Any], kind: type[Any]) -> Callable[..., Any]:
    """`trainer.train` that lets the attached callback see how it ends."""

    @functools.wraps(original)
    def train(resume_from_checkpoint: str | bool | None = None, *args: Any, **kwargs: Any) -> Any:
        # Looked up per call: the callback may have been replaced since the wrap.
        callback = _current_callback(trainer, kind)
        attached = getattr(trainer, _ATTACHED, None)
        if callback is None and attached is not None:
            attached._warn_absent()
        if callback is not None:
            callback._before_train(trainer, resume_from_checkpoint, kwargs.get("trial", args[0] if args else None))
        try:
            with _printing_off_stdout():
                return original(resume_from_checkpoint, *args, **kwargs)
        except BaseException as error:
            if callback is not None:
                callback._train_failed(error)
            raise

    setattr(train, _WRAPPED_MARK, True)
    return train
