"""PyTorch Lightning's logger door: `Trainer(logger=TrainwireLogger())`.

```python
from trainwire.integrations.lightning import TrainwireCallback
from trainwire.integrations.lightning import TrainwireLogger

trainer = lightning.Trainer(logger=TrainwireLogger("runs/exp-1"), callbacks=[TrainwireCallback()])
```

Alone, the logger owns a run: `log_hyperparams` -> the config of `run.started` (written at
the first `log_metrics`), `log_metrics` -> `train.step` (every `log_every_n_steps`) and
`eval.completed` for `val_` / `val/` values, a `ModelCheckpoint` save -> `checkpoint.saved`,
`finalize` -> `run.finished` (`succeeded`, or `failed` for any exception: a logger is told no
more). With a `TrainwireCallback` in the same trainer both write one run: the callback finds
the logger in `trainer.loggers` at `setup`, takes the logger's run (when it has no run of
its own) and its hyperparameters, and from then on writes every step, evaluation, stop and
the end itself; the logger only hands over what it is given.
"""

from __future__ import annotations

import os
from argparse import Namespace
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from lightning.pytorch.callbacks import ModelCheckpoint
from lightning.pytorch.loggers import Logger
from lightning.pytorch.utilities import rank_zero_only

from trainwire.integrations.core.hooks import number
from trainwire.integrations.core.lifecycle import Lifecycle, owned_run
from trainwire.writer.run import Run

__all__ = ["VALIDATION_PREFIXES", "TrainwireLogger"]

#: the names `self.log` gives validation values (taken off in `eval.completed`)
VALIDATION_PREFIXES = ("val_", "val/")
_NOT_METRICS = frozenset({"epoch", "loss", "train_loss", "train/loss"})


class LightningReportedFailure(Exception):
    """What a logger learns of a failed `fit`: only that it failed."""


class TrainwireLogger(Logger):
    """A Lightning `Logger` writing `<save_dir>/progress.jsonl` (the current directory by default).

    `run_options` go to the owned `Run`. Only global rank 0 writes (Lightning calls a
    logger's methods there only).
    """

    def __init__(self, save_dir: str | os.PathLike[str] = ".", **run_options: Any) -> None:
        super().__init__()
        self._save_dir = Path(save_dir)
        self._run_options = run_options
        self._lifecycle: Lifecycle | None = None  # made on rank 0, at the first use
        self._hyperparameters: dict[str, Any] = {}
        #: set by a `TrainwireCallback` that writes this run: the logger then writes nothing
        self.joined = False

    # -- what a TrainwireCallback takes --------------------------------------------------------

    @property
    def hyperparameters(self) -> dict[str, Any]:
        """Everything `log_hyperparams` was given, for `run.started.config`."""
        return dict(self._hyperparameters)

    def lend_run(self) -> tuple[Run, Callable[[], Run]]:
        """The logger's run and the factory of the runs after it, for a callback that writes them."""
        self.joined = True
        run, new_run = owned_run(self._save_dir, rank=0, **self._run_options)
        return run, new_run

    # -- Logger ---------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return "trainwire"

    @property
    def version(self) -> str | None:
        run = self._lifecycle.run if self._lifecycle is not None else None
        return run.run_id if run is not None else None

    @property
    def save_dir(self) -> str:
        return str(self._save_dir)

    @rank_zero_only
    def log_hyperparams(self, params: dict[str, Any] | Namespace, *args: Any, **kwargs: Any) -> None:
        values = vars(params) if isinstance(params, Namespace) else dict(params)
        self._hyperparameters.update(values)

    @rank_zero_only
    def log_metrics(self, metrics: Mapping[str, float], step: int | None = None) -> None:
        if self.joined:
            return  # the callback writes each step with `trainer.logged_metrics`
        if step is None:
            return
        # Lightning hands a logger the 0-based index of the last optimizer step; a trainwire
        # step counts the steps done (`trainer.global_step`, as the callback writes it).
        step += 1
        run = self._begin(step)
        if run is None:
            return
        validation = {
            name[len(prefix) :]: value
            for name, value in metrics.items()
            for prefix in VALIDATION_PREFIXES
            if name.startswith(prefix)
        }
        training = {name: value for name, value in metrics.items() if not name.startswith(VALIDATION_PREFIXES)}
        if validation:
            run.eval(step, validation, epoch=number(metrics.get("epoch")), split="validation")
        if set(training) - {"epoch"} and (run.last_step is None or step > run.last_step):
            run.step(
                step,
                loss=number(
                    next((metrics[name] for name in ("loss", "train_loss", "train/loss") if name in metrics), None)
                ),
                metrics={name: value for name, value in training.items() if name not in _NOT_METRICS} or None,
            )

    @rank_zero_only
    def after_save_checkpoint(self, checkpoint_callback: ModelCheckpoint) -> None:
        run = self._lifecycle.run if self._lifecycle is not None and not self.joined else None
        path = checkpoint_callback.last_model_path or checkpoint_callback.best_model_path
        step = getattr(checkpoint_callback, "_last_global_step_saved", None)  # Lightning keeps it there
        if run is not None and run.started and path:
            run.checkpoint(step if isinstance(step, int) else run.last_step or 0, Path(path).absolute())

    @rank_zero_only
    def finalize(self, status: str) -> None:
        lifecycle = self._lifecycle
        if self.joined or lifecycle is None or not lifecycle.in_train:
            return
        if status == "failed":
            lifecycle.fail(LightningReportedFailure("fit failed (Lightning tells a logger no more)"))
        else:
            lifecycle.end_train()
            lifecycle.finish()

    # -- internals ------------------------------------------------------------------------

    def _begin(self, step: int) -> Run | None:
        """The run, started with the train phase open at the first values of a `fit`."""
        if self._lifecycle is None:
            run, new_run = owned_run(self._save_dir, rank=0, **self._run_options)
            self._lifecycle = Lifecycle(run, owns_run=True, new_run=new_run)
        if not self._lifecycle.in_train:
            self._lifecycle.begin_train(
                step, total_steps=None, start=lambda run: run.start(config=self._hyperparameters or None)
            )
        return self._lifecycle.run
