"""A transformers `Trainer.hyperparameter_search(backend="ray")` with `attach()`: the search
is the callback's run and each Tune trial a trial of it, written on the driver.

Tune trains each trial in a worker process, from a pickled copy of the Trainer: the attached
callback and trainwire's wrappers (which hold the run's file and locks) are taken off the
Trainer while the search runs, and a `TuneSearch` writing into the run is given to Tune as one
of its callbacks (with its stopper and, unless given, the run's output directory as
`storage_path`). A trial's config is its params; the Trainer reports at each evaluation, so
each report is a step of the trial at Tune's `training_iteration` with the evaluation's
metrics and `objective`; the best trial is ranked by `objective` in the search's direction.
"""

from __future__ import annotations

import contextlib
import inspect
import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from trainwire.integrations.core.tune_search import TuneSearch

if TYPE_CHECKING:
    from transformers import Trainer

__all__ = ["search_on_tune"]

#: what Tune's trials report besides the evaluation's metrics (transformers' name)
OBJECTIVE = "objective"


def search_on_tune(
    trainer: Trainer, callback: Any, original: Callable[..., Any], bound: inspect.BoundArguments, wrapped: list[str]
) -> Any:
    """Runs `original` (the Trainer's own `hyperparameter_search`, arguments `bound`) with the
    callback's run written by a `TuneSearch`; `wrapped` names the Trainer's attributes that
    trainwire set (taken off while Tune copies the Trainer)."""
    run = callback._search_begins(trainer, bound.arguments["n_trials"], follows_trials=False)
    search = None
    if run is not None:
        mode = "max" if str(bound.arguments["direction"]).startswith("max") else "min"
        lifecycle = callback.lifecycle
        search = TuneSearch(
            run=run, metric=OBJECTIVE, mode=mode, stop=lifecycle.stop or False, signals=lifecycle.takes_signals
        )
        options = bound.arguments["kwargs"]
        options["callbacks"] = [*options.get("callbacks", []), search]
        options.setdefault("stop", search.stopper)
        options.setdefault("storage_path", os.path.abspath(run.output_dir or "."))
    try:
        with detached(trainer, callback, wrapped), search or contextlib.nullcontext():
            result = original(*bound.args, **bound.kwargs)
    except BaseException as error:
        callback._search_ended(error)
        raise
    callback._search_ended(None)
    return result


@contextlib.contextmanager
def detached(trainer: Trainer, callback: Any, wrapped: list[str]) -> Iterator[None]:
    """The Trainer without `callback` and the attributes named `wrapped`, put back after."""
    callbacks = trainer.callback_handler.callbacks
    position = callbacks.index(callback)
    callbacks.remove(callback)
    kept = {name: trainer.__dict__.pop(name) for name in wrapped if name in trainer.__dict__}
    try:
        yield
    finally:
        trainer.__dict__.update(kept)
        callbacks.insert(position, callback)
