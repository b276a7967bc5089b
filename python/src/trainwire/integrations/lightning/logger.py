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
more). Every `fit`, `validate`, `test` and `predict` is a run (Lightning shows the logger the
module, and so the trainer, at `log_graph`): a `fit` that logs nothing still writes its
phases, and the values of `validate` or `test` are `eval.completed` of a run of their own
(split `validation` or `test`). `version` is resolved as CSVLogger's is (`version_0`,
`version_1`, ... under `<save_dir>/<name>`), so `ModelCheckpoint` saves in
`<save_dir>/<name>/version_N/checkpoints`. The logger pickles and deep-copies at any time: a
copy keeps the options, hyperparameters and version, not the run (it writes a run of its own
if it is used). With a `TrainwireCallback` in the same trainer both write one run: the callback finds
the logger in `trainer.loggers` at `setup`, takes the logger's run (when it has no run of
its own) and its hyperparameters, and from then on writes every step, evaluation, stop and
the end itself; the logger only hands over what it is given.
"""

from __future__ import annotations

import os
import re
from argparse import Namespace
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import lightning.pytorch as pl
from lightning.pytorch.callbacks import ModelCheckpoint
from lightning.pytorch.loggers import Logger
from lightning.pytorch.utilities import rank_zero_only

from trainwire.integrations.core.hooks import number
from trainwire.integrations.core.lifecycle import Lifecycle, owned_run
from trainwire.writer.run import Run

__all__ = ["VALIDATION_PREFIXES", "TrainwireLogger"]

#: the names `self.log` gives validation values (taken off in `eval.completed`)
VALIDATION_PREFIXES = ("val_", "val/")
#: the split of an evaluation outside `fit`, by the trainer's function, and the prefixes taken off
EVALUATION_SPLITS = {"validate": ("validation", VALIDATION_PREFIXES), "test": ("test", ("test_", "test/"))}
_VERSION_FOLDER = re.compile(r"version_(\d+)")
_NOT_METRICS = frozenset({"epoch", "loss", "train_loss", "train/loss"})


class LightningReportedFailure(Exception):
    """What a logger learns of a failed `fit`: only that it failed."""


class TrainwireLogger(Logger):
    """A Lightning `Logger` writing `<save_dir>/progress.jsonl` (the current directory by default).

    `name` and `version` place `ModelCheckpoint`'s folder as for the built-in loggers
    (`<save_dir>/<name>/version_<N>`, the next free N unless given); a `name` given is also
    the run's name, as it was before it placed folders. `run_options` go to the owned `Run`. Only global rank 0 writes (Lightning calls a logger's methods there only).
    """

    def __init__(
        self,
        save_dir: str | os.PathLike[str] = ".",
        *,
        name: str | None = None,
        version: int | str | None = None,
        **run_options: Any,
    ) -> None:
        super().__init__()
        if name is not None:
            run_options.setdefault("name", name)
        self._save_dir = Path(save_dir)
        self._name = name if name is not None else "trainwire"
        self._version = version
        self._run_options = run_options
        self._lifecycle: Lifecycle | None = None  # made on rank 0, at the first use
        self._trainer: pl.Trainer | None = None  # the trainer of the current fit/validate/test/predict
        self._evaluating = False  # a run of validate/test/predict is open
        self._hyperparameters: dict[str, Any] = {}
        #: set by a `TrainwireCallback` that writes this run: the logger then writes nothing
        self.joined = False

    def __getstate__(self) -> dict[str, Any]:
        # The run holds a lock and an open file: a copy (spawned process, tuner, checkpoint
        # of the trainer) keeps the options, not the run, and opens a run of its own if used.
        state = self.__dict__.copy()
        state.update(_lifecycle=None, _trainer=None, _evaluating=False)
        return state

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
        return self._name

    @property
    def version(self) -> int | str:
        if self._version is None:
            self._version = self._next_version()
        return self._version

    @property
    def save_dir(self) -> str:
        return str(self._save_dir)

    @rank_zero_only
    def log_hyperparams(self, params: dict[str, Any] | Namespace, *args: Any, **kwargs: Any) -> None:
        values = vars(params) if isinstance(params, Namespace) else dict(params)
        self._hyperparameters.update(values)

    @rank_zero_only
    def log_graph(self, model: Any, input_array: Any = None) -> None:
        # Lightning calls this at the start of every fit, validate, test and predict (after
        # the callbacks' setup): the module's trainer tells which, and the run begins here,
        # so that a fit that logs nothing is a run too.
        trainer = getattr(model, "_trainer", None)
        self._trainer = trainer if isinstance(trainer, pl.Trainer) else None
        if self.joined or self._trainer is None:
            return
        if self._function() == "fit":
            self._begin(self._trainer.global_step)
        else:
            self._begin_evaluation()

    @rank_zero_only
    def log_metrics(self, metrics: Mapping[str, float], step: int | None = None) -> None:
        if self.joined or step is None:
            return  # with a callback, it writes each step with `trainer.logged_metrics`
        function = self._function()
        if function in EVALUATION_SPLITS:
            self._log_evaluation(metrics, function)
            return
        if function != "fit":
            return  # predict logs nothing of its own
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
        lifecycle, evaluating = self._lifecycle, self._evaluating
        self._trainer, self._evaluating = None, False
        if self.joined:
            self.joined = False  # the next trainer's callback joins again at its setup
            return
        if lifecycle is None or not (lifecycle.in_train or evaluating):
            return
        if status == "failed":
            lifecycle.fail(LightningReportedFailure("fit failed (Lightning tells a logger no more)"))
            return
        if lifecycle.in_train:
            lifecycle.end_train()
        lifecycle.finish()

    # -- internals ------------------------------------------------------------------------

    def _function(self) -> str:
        """The trainer's function now (`fit`, `validate`, `test`, `predict`); `fit` when the
        logger is used without a trainer."""
        state = self._trainer.state if self._trainer is not None else None
        return str(state.fn.value) if state is not None and state.fn is not None else "fit"

    def _lifecycle_of_run(self) -> Lifecycle:
        if self._lifecycle is None:
            run, new_run = owned_run(self._save_dir, rank=0, **self._run_options)
            self._lifecycle = Lifecycle(run, owns_run=True, new_run=new_run)
        return self._lifecycle

    def _begin(self, step: int) -> Run | None:
        """The run, started with the train phase open at the start of a `fit`."""
        lifecycle = self._lifecycle_of_run()
        if not lifecycle.in_train:
            lifecycle.begin_train(step, total_steps=None, start=self._start)
        return lifecycle.run

    def _begin_evaluation(self) -> Run | None:
        """The run of a `validate`, `test` or `predict` (a new one after a finished run)."""
        lifecycle = self._lifecycle_of_run()
        if not self._evaluating:
            lifecycle.renew()
            self._evaluating = True
        run = lifecycle.run
        if run is not None and not run.started:
            self._start(run)
        return run

    def _log_evaluation(self, metrics: Mapping[str, float], function: str) -> None:
        run = self._begin_evaluation()
        split, prefixes = EVALUATION_SPLITS[function]
        values = {_without(name, prefixes): value for name, value in metrics.items() if name != "epoch"}
        step = self._trainer.global_step if self._trainer is not None else 0
        if run is not None and values:
            run.eval(step, values, epoch=number(metrics.get("epoch")), split=split)

    def _start(self, run: Run) -> None:
        run.start(
            config=self._hyperparameters or None,
            world_size=self._trainer.world_size if self._trainer is not None else None,
        )

    def _next_version(self) -> int:
        """The next free `version_<N>` under `<save_dir>/<name>`, as the built-in loggers count."""
        root = self._save_dir / self._name
        found = [_VERSION_FOLDER.fullmatch(path.name) for path in root.iterdir()] if root.is_dir() else []
        return max((int(match.group(1)) + 1 for match in found if match), default=0)


def _without(name: str, prefixes: tuple[str, ...]) -> str:
    return next((name[len(prefix) :] for prefix in prefixes if name.startswith(prefix)), name)
