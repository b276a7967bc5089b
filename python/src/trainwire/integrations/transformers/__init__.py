"""Hugging Face transformers integration: a `TrainerCallback` that writes the trainwire stream.

```python
from trainwire.integrations.transformers import attach

callback = attach(trainer)            # owns a Run writing <args.output_dir>/progress.jsonl
trainer.train()
callback.raise_if_stopped()           # a honoured stop skips whatever promotes the model
trainer.save_model()
```

What it maps: `on_train_begin` -> `run.started` (when it owns the run) and `phase.started
train`; a second `on_train_begin` without `on_train_end` (`auto_find_batch_size` after an
out-of-memory error) -> `train.restarted`; `on_step_end` -> `train.step` (one per step,
under the run's throttle, with the loss and custom values of `on_log` when the step is
logged); `on_epoch_end` -> `train.epoch`; the batches of an evaluation or prediction loop
(`on_prediction_step`) -> an `eval` or `predict` phase with `phase.progress`, nested in
`train` during training; `on_evaluate` -> `eval.completed`; `on_save` ->
`checkpoint.saved`; `on_train_end` -> `phase.ended train`. Only world process zero writes;
every rank takes part in the stop decision so that all ranks stop at the same step.

The callback is `callback`'s, one documented hook per `TrainerCallback` event, with the
run's lifecycle across a second `train()`, a rebuilt Trainer and `evaluate()`. Beside it:
`logs` (what the Trainer's logs mean in trainwire fields), `checkpoint_origins` (the
`trainwire.json` of each checkpoint, read back on resume), `held_step` (one step per trainer
step), `wrapper` (the wrapper around `train()` and `evaluate()`) and `hyperparameter_search`'s
backends, `optuna_trials` and `tune_search`. This folder imports the shared core
(`integrations.core`), never another framework's folder.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from trainwire.extras import require_extra

require_extra("transformers")  # `pip install 'trainwire[transformers]'` named, in place of a bare ImportError

from trainwire.integrations.core.lifecycle import owned_run, watched_stop  # noqa: E402
from trainwire.integrations.transformers.callback import TrainwireCallback  # noqa: E402
from trainwire.integrations.transformers.checkpoint_origins import CHECKPOINT_ORIGIN_FILE, checkpoint_origin  # noqa: E402
from trainwire.stop import StopControl  # noqa: E402
from trainwire.writer.run import Run  # noqa: E402

if TYPE_CHECKING:
    from transformers import Trainer

__all__ = ["CHECKPOINT_ORIGIN_FILE", "TrainwireCallback", "attach", "checkpoint_origin"]


def attach(
    trainer: Trainer,
    run: Run | None = None,
    *,
    output_dir: str | os.PathLike[str] | None = None,
    stop: bool | StopControl = True,
    signals: bool = False,
    check_interval_s: float = 0.25,
    sync_every_steps: int = 1,
    callback: TrainwireCallback | None = None,
    **run_options: Any,
) -> TrainwireCallback:
    """Make `trainer` write the trainwire stream; returns the callback.

    Without `run`, the callback owns one: a `Run(output_dir or args.output_dir, **run_options)`
    started at `on_train_begin` and finished when training ends. With `stop=True` the control
    file in the run's output directory is watched (a `StopControl` may be passed instead);
    `signals=True` also maps SIGINT/SIGTERM to a graceful stop while the callback is in the
    training loop (main thread only; from `on_train_begin` to `on_train_end`). Pass
    `callback=` to re-attach an existing callback to a rebuilt trainer.

    An owned run covers one `train()`: a later `train()` (a resume, a rebuilt trainer
    re-attached with `callback=`) starts a new run in the same file, and an `evaluate()`
    outside `train()` writes a run of one `eval` phase. While a run writes to stdout
    (`stdout=True`), `train()` and `evaluate()` print to stderr, so stdout is NDJSON only.
    """
    if callback is not None:
        return callback.attach(trainer)
    zero = trainer.is_world_process_zero()
    owns_run = run is None
    new_run: Callable[[], Run] | None = None
    if run is None and zero:
        # Later owned runs (a second train(), an evaluate() after the end) get their own id.
        run, new_run = owned_run(output_dir if output_dir is not None else trainer.args.output_dir, **run_options)
    control: StopControl | None
    if isinstance(stop, StopControl):
        control = stop
    elif stop:
        directory = output_dir or trainer.args.output_dir
        control = watched_stop(run, zero=zero, directory=directory, check_interval_s=check_interval_s)
    else:
        control = None
    created = TrainwireCallback(
        run if zero else None,
        stop=control,
        owns_run=owns_run,
        sync_every_steps=sync_every_steps,
        signals=signals,
        new_run=new_run,
    )
    return created.attach(trainer)
