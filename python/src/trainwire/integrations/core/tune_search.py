"""Ray Tune integration: a `ray.tune.Callback` on the driver that writes the experiment's
trials, which run in other processes, into one trainwire stream (explicit `trial=`).

```python
from trainwire.integrations.core.tune_search import TuneSearch

with TuneSearch("out-tune", metric="loss", mode="min", total_trials=8) as search:
    tuner = tune.Tuner(
        trainable,
        param_space=space,
        run_config=tune.RunConfig(storage_path=search.storage_path, callbacks=[search], stop=search.stopper),
    )
    tuner.fit()
sys.exit(search.run.exit_code)
```

Trials are numbered from 1 in the order Tune starts them; a trial's config is its params.
Each result is a `train.step` of its trial at `training_iteration`, the reported numbers
as metrics (`loss` as the step's loss); an error ends the trial `failed`, completion
`succeeded` with its last result and the best trial by `metric`/`mode` after it; a trial a
stop cut short ends `failed` ("the experiment stopped before the trial ended").
Checkpoints live under Ray's storage path: give Tune `storage_path=search.storage_path`
(the output directory) and they are written relative to it (writer rule 9); a checkpoint
kept elsewhere is left out with a WARNING. A stop (control file, SIGTERM, SIGINT) ends
the experiment through Tune's own stopping (`search.stopper`); while the block is open, Tune
installs no SIGINT handler of its own (`TUNE_DISABLE_SIGINT_HANDLER`). Open it after
`ray.init`, which installs a SIGTERM handler.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Iterator
from types import TracebackType
from typing import Any, Literal

from trainwire.extras import require_extra

require_extra("ray")  # `pip install 'trainwire[ray]'` named, in place of a bare ImportError

from ray import tune  # noqa: E402
from ray.tune.stopper.noop import NoopStopper  # noqa: E402

from trainwire.integrations.core.search import OwnedSearchRun  # noqa: E402
from trainwire.writer.run import Run  # noqa: E402

__all__ = ["TuneSearch"]

#: the environment setting that keeps Tune from installing its SIGINT handler in `fit()`
TUNE_SIGINT_SETTING = "TUNE_DISABLE_SIGINT_HANDLER"

#: the error of a trial the experiment's stop cut short
STOPPED_BEFORE_END = "the experiment stopped before the trial ended"

#: Tune's bookkeeping in every result: not the trial's metrics
TUNE_FIELDS = frozenset(
    {
        "training_iteration",
        "timestamp",
        "time_this_iter_s",
        "time_total_s",
        "time_since_restore",
        "iterations_since_restore",
        "timesteps_total",
        "timesteps_since_restore",
        "episodes_total",
        "pid",
        "done",
        "trial_id",
        "should_checkpoint",
        "checkpoint_dir_name",
        "node_ip",
        "hostname",
        "date",
        "experiment_tag",
    }
)


class TuneSearch(tune.Callback):
    """Writes a Tune experiment's trials into one trainwire run and stops it through Tune.

    Without `run`, the search owns a `Run(output_dir, **run_options)`, started when the
    block opens (`total_trials`) and finished when it closes: `interrupted` after a stop,
    `failed` when `fit` raised, else `succeeded`. `metric` and `mode` (`min` or `max`)
    rank the trials for `trial.ended.best` and are the owned run's objective; without them
    no best is written. `name=` names the run: give Tune the same experiment name
    (`tune.RunConfig(name=search.run.name)`).
    """

    def __init__(
        self,
        output_dir: str | os.PathLike[str] | None = None,
        *,
        run: Run | None = None,
        metric: str | None = None,
        mode: str = "min",
        total_trials: int | None = None,
        stop: bool = True,
        signals: bool = True,
        check_interval_s: float = 0.25,
        **run_options: Any,
    ) -> None:
        if metric is not None and mode in ("min", "max"):
            run_options.setdefault("objective", (metric, mode))  # the summary's best follows `mode`
        self._owned = OwnedSearchRun(
            output_dir, run=run, stop=stop, signals=signals, check_interval_s=check_interval_s, **run_options
        )
        self.metric = metric
        self.mode = mode
        self.total_trials = total_trials
        self._numbers: dict[str, int] = {}
        self._best: tuple[int, float] | None = None
        self._ended: set[int] = set()
        self._environment = contextlib.ExitStack()

    @property
    def run(self) -> Run:
        """The run the experiment's trials are written to."""
        return self._owned.run

    @property
    def storage_path(self) -> str | None:
        """The root Tune should keep its results and checkpoints under: the output directory."""
        return self.run.output_dir

    @property
    def stopper(self) -> tune.Stopper:
        """For `RunConfig(stop=...)`: ends the experiment once a stop was honoured."""
        return SearchStopper(self._owned)

    @property
    def stopped(self) -> bool:
        """True once a stop was honoured."""
        return self._owned.stopped

    def __reduce__(self) -> tuple[Any, tuple[()]]:
        # The Tuner pickles its run config for `Tuner.restore`: the copy is a callback that
        # writes nothing (a run writes from the process that made it; a restored
        # experiment is given a new TuneSearch).
        return tune.Callback, ()

    def __enter__(self) -> TuneSearch:
        self._owned.begin(total_trials=self.total_trials)
        stop = self._owned.stop
        if stop is not None and stop.handles_signals:
            # Tune's own Ctrl+C handler would end the experiment without the stop (the run
            # `succeeded`); with it off, SIGINT stays the search's and ends it `interrupted`.
            self._environment.enter_context(tune_sigint_handler_off())
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> Literal[False]:
        self._environment.close()
        self._owned.end(exc)
        return False

    # -- Tune's hooks ---------------------------------------------------------------------

    def on_trial_start(self, iteration: int, trials: list[Any], trial: Any, **info: Any) -> None:
        number = self._numbers.setdefault(trial.trial_id, len(self._numbers) + 1)
        self.run.trial_started(number, flat_params(trial.config))

    def on_trial_result(
        self, iteration: int, trials: list[Any], trial: Any, result: dict[str, Any], **info: Any
    ) -> None:
        step = result.get("training_iteration")
        if not isinstance(step, int):
            return
        metrics = reported_metrics(result)
        self.run.step(step, loss=metrics.get("loss"), metrics=metrics, trial=self._number(trial))

    def on_checkpoint(self, iteration: int, trials: list[Any], trial: Any, checkpoint: Any, **info: Any) -> None:
        step = (trial.last_result or {}).get("training_iteration", 0)
        self.run.checkpoint(step, checkpoint.path, trial=self._number(trial))

    def on_trial_complete(self, iteration: int, trials: list[Any], trial: Any, **info: Any) -> None:
        number = self._number(trial)
        self._rank(number, reported_metrics(trial.last_result or {}).get(self.metric) if self.metric else None)
        self._end(number, "succeeded", trial)

    def on_trial_error(self, iteration: int, trials: list[Any], trial: Any, **info: Any) -> None:
        self._end(self._number(trial), "failed", trial, error=trial_error(trial))

    def on_experiment_end(self, trials: list[Any], **info: Any) -> None:
        # A trial the experiment's stop cut short gets no completion from Tune; a trial has
        # no interrupted status, so it ends `failed` (writer rule 14).
        for trial in trials:
            number = self._numbers.get(trial.trial_id)
            if number is not None and number not in self._ended:
                self._end(number, "failed", trial, error=STOPPED_BEFORE_END)

    # -- internals ------------------------------------------------------------------------

    def _end(self, number: int, status: str, trial: Any, error: str | None = None) -> None:
        self._ended.add(number)
        metrics = reported_metrics(trial.last_result or {})
        self.run.trial_ended(number, status, metrics=metrics, error=error, best=self._best_field())

    def _number(self, trial: Any) -> int:
        return self._numbers.setdefault(trial.trial_id, len(self._numbers) + 1)

    def _rank(self, number: int, value: Any) -> None:
        if not isinstance(value, (int, float)) or math.isnan(value):
            return
        better = self._best is None or (value < self._best[1] if self.mode == "min" else value > self._best[1])
        if better:
            self._best = (number, float(value))

    def _best_field(self) -> dict[str, Any] | None:
        if self._best is None or self.metric is None:
            return None
        return {"trial": self._best[0], "metric": self.metric, "value": self._best[1]}


class SearchStopper(tune.Stopper):
    """Tune's experiment-wide stop, asked by the search's stop control."""

    def __init__(self, owned: OwnedSearchRun) -> None:
        self._owned = owned

    def __call__(self, trial_id: str, result: dict[str, Any]) -> bool:
        return False

    def __reduce__(self) -> tuple[Any, tuple[()]]:
        return NoopStopper, ()  # as TuneSearch's: the pickled copy for `Tuner.restore` stops nothing

    def stop_all(self) -> bool:
        return self._owned.poll_stop() is not None


@contextlib.contextmanager
def tune_sigint_handler_off() -> Iterator[None]:
    """Tune's `fit()` leaves SIGINT alone while this is open (the setting is restored after)."""
    previous = os.environ.get(TUNE_SIGINT_SETTING)
    os.environ[TUNE_SIGINT_SETTING] = "1"
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(TUNE_SIGINT_SETTING, None)
        else:
            os.environ[TUNE_SIGINT_SETTING] = previous


def flat_params(config: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """A trial's config as params: nested dictionaries flattened with `/`."""
    params: dict[str, Any] = {}
    for name, value in config.items():
        key = f"{prefix}{name}"
        if isinstance(value, dict):
            params.update(flat_params(value, f"{key}/"))
        else:
            params[key] = value
    return params


def trial_error(trial: Any) -> str:
    """What a failed trial raised: the last line of the error file Tune wrote beside it
    (`ValueError: lr must be positive`), read on the driver."""
    try:
        with open(trial.error_file, encoding="utf-8", errors="replace") as file:
            lines = [line.strip() for line in file if line.strip()]
    except (OSError, TypeError):  # no file: the trial died without a traceback
        lines = []
    return lines[-1] if lines else "the trial raised"


def reported_metrics(result: dict[str, Any]) -> dict[str, float]:
    """The numbers a trial reported, without Tune's bookkeeping."""
    return {
        name: float(value)
        for name, value in result.items()
        if name not in TUNE_FIELDS and isinstance(value, (int, float)) and not isinstance(value, bool)
    }
