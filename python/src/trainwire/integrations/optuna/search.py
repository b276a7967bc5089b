"""Optuna integration: one trainwire stream per study (per worker process).

```python
from trainwire.integrations.optuna import OptunaSearch

with OptunaSearch(study, "out-study", n_trials=20) as search:
    study.optimize(search.objective(objective), n_trials=20, callbacks=[search])
sys.exit(search.run.exit_code)
```

`search.objective(objective)` runs the objective in the trial's scope, so whatever it
writes to `search.run` (a plain loop, a `Trainer` attached with `run=search.run`) is the
trial's; `trial.started`, with the sampled params, is written once the objective has
suggested them (`ReportingTrial`), at the latest before the first event the objective
writes in the trial: suggest first, then write progress.
The trial it gets reports its intermediate values (`trial.report`) as `eval.completed` at
their step. The callback (`search` itself) sees each trial end, once Optuna has told the
study: `trial.ended` with the value(s), the state mapped and the best trial after it.
Optuna numbers trials from 0, the contract from 1: trainwire trial = Optuna number + 1.
A stop (control file, signal) ends the study after the running trial(s) (`study.stop()`).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any, Literal

from trainwire.extras import require_extra

require_extra("optuna")  # `pip install 'trainwire[optuna]'` named, in place of a bare ImportError

import optuna  # noqa: E402
from optuna.study import StudyDirection  # noqa: E402
from optuna.trial import FrozenTrial  # noqa: E402

from trainwire.integrations.core.search import OwnedSearchRun  # noqa: E402
from trainwire.integrations.core.study import best_so_far, objective_names, trial_status  # noqa: E402
from trainwire.writer.run import Run  # noqa: E402

__all__ = ["OptunaSearch"]

logger = logging.getLogger("trainwire.integrations.optuna")

#: how Optuna names a study it was given no name for (`optuna.storages._base`, private)
UNNAMED_STUDY_PREFIX = "no-name-"

#: what an objective may read of its trial before its parameters are all sampled
READ_ONLY = frozenset({"number", "study", "params", "distributions", "user_attrs", "system_attrs", "datetime_start"})


class OptunaSearch:
    """Writes an Optuna study's trials into one trainwire run and stops it cooperatively.

    Without `run`, the search owns a `Run(output_dir, **run_options)`, named after the
    study (unless `name=` is given) with the study's direction as its objective
    (`eval/<metric>`: the intermediate values), started when the
    block opens (`total_trials=n_trials`, the study's name, directions and, for a grid,
    its search space as config) and finished when it closes: `interrupted` after a stop,
    `failed` when the study raised, else `succeeded`. With `stop=True` the control file in
    the output directory is watched; `signals=True` (main thread) maps SIGINT/SIGTERM to
    the same stop while the block is open. A stop ends the study after its running trials.
    """

    def __init__(
        self,
        study: optuna.Study,
        output_dir: str | os.PathLike[str] | None = None,
        *,
        run: Run | None = None,
        n_trials: int | None = None,
        stop: bool = True,
        signals: bool = True,
        check_interval_s: float = 0.25,
        **run_options: Any,
    ) -> None:
        self.study = study
        #: the name of each objective in `trial.ended.metrics` and `best.metric`
        self.metric_names = objective_names(study)
        self._owned = OwnedSearchRun(
            output_dir,
            run=run,
            stop=stop,
            signals=signals,
            check_interval_s=check_interval_s,
            **{**study_run_options(study, self.metric_names), **run_options},
        )
        self.n_trials = n_trials
        self._lock = threading.Lock()
        self._errors: dict[int, BaseException] = {}  # failed trials, written by the objective wrapper
        self._ended: set[int] = set()

    @property
    def run(self) -> Run:
        """The run the study's trials are written to."""
        return self._owned.run

    @property
    def stopped(self) -> bool:
        """True once a stop was honoured."""
        return self._owned.stopped

    def __enter__(self) -> OptunaSearch:
        self._owned.begin(total_trials=self.n_trials, config=study_config(self.study))
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> Literal[False]:
        self._owned.end(exc)
        return False

    # -- the objective ----------------------------------------------------------------

    def objective(self, objective: Callable[[optuna.Trial], Any]) -> Callable[[optuna.Trial], Any]:
        """`objective`, seen by the run: its trial starts, runs in the trial's scope and
        reports its intermediate values; an error it raises ends the trial `failed`."""

        def recorded(trial: optuna.Trial) -> Any:
            number = trial.number + 1
            self._poll_stop()
            seen = ReportingTrial(trial, self)
            try:
                with self.run.trial_scope(number, opening=seen.announce):
                    value = objective(seen)  # type: ignore[arg-type]  # a stand-in with the same API
            except optuna.TrialPruned:
                seen.announce()
                raise
            except BaseException as error:
                # Optuna calls no callback for an error it does not catch: the trial ends here.
                seen.announce()
                self._end(number, "failed", {}, error)
                raise
            seen.announce()
            return value

        return recorded

    def report(self, trial: optuna.Trial, value: float, step: int) -> None:
        """An intermediate value of `trial` at `step`: `eval.completed` of the trial."""
        self.run.eval(step, {self.metric_names[0]: value}, trial=trial.number + 1)

    # -- the study callback -------------------------------------------------------------

    def __call__(self, study: optuna.Study, trial: FrozenTrial) -> None:
        """Optuna's callback: the trial ended; a stop ends the study after it."""
        status = trial_status(trial.state)
        if status is not None:
            metrics = dict(zip(self.metric_names, trial.values or (), strict=False))
            self._end(trial.number + 1, status, metrics, None)
        self._poll_stop()

    # -- internals ------------------------------------------------------------------------

    def _end(self, number: int, status: str, metrics: Mapping[str, Any], error: BaseException | None) -> None:
        with self._lock:
            if number in self._ended:
                return
            self._ended.add(number)
        self.run.trial_ended(
            number,
            status,
            metrics=metrics,
            error=error if error is not None else (None if status != "failed" else "the objective returned no value"),
            best=best_so_far(self.study, self.metric_names),
        )

    def _poll_stop(self) -> None:
        if self._owned.poll_stop():
            self.study.stop()


class ReportingTrial:
    """The Optuna trial an objective gets: the same trial, announced once its parameters
    are sampled, whose `report` is also written.

    Optuna samples a parameter when the objective asks for it (define-by-run): the trial's
    `trial.started`, with its params, waits for the first use of the trial that is not a
    `suggest_*` or a look at the trial (a report, a pruning check, ...), or the
    objective's return."""

    def __init__(self, trial: optuna.Trial, search: OptunaSearch) -> None:
        self._trial = trial
        self._search = search
        self._announced = False

    def announce(self) -> None:
        """Write `trial.started` with the parameters sampled so far (once)."""
        if not self._announced:
            self._announced = True
            self._search.run.trial_started(self._trial.number + 1, self._trial.params)

    def report(self, value: float, step: int) -> None:
        self.announce()
        self._trial.report(value, step)
        self._search.report(self._trial, value, step)

    def __getattr__(self, name: str) -> Any:
        if not name.startswith("suggest_") and name not in READ_ONLY:
            self.announce()
        return getattr(self._trial, name)


def study_run_options(study: optuna.Study, metric_names: list[str]) -> dict[str, Any]:
    """What an owned run takes of the study: its name (not Optuna's made-up `no-name-...`)
    and, for one objective, the intermediate values' series (`eval/<name>`) and direction."""
    options: dict[str, Any] = {}
    if not study.study_name.startswith(UNNAMED_STUDY_PREFIX):
        options["name"] = study.study_name
    if len(study.directions) == 1:
        goal = "max" if study.direction == StudyDirection.MAXIMIZE else "min"
        options["objective"] = (f"eval/{metric_names[0]}", goal)
    return options


def study_config(study: optuna.Study) -> dict[str, Any]:
    """What the study knows up front: its name, directions and a grid's search space."""
    config: dict[str, Any] = {
        "study_name": study.study_name,
        "directions": [direction.name.lower() for direction in study.directions],
        "sampler": type(study.sampler).__name__,
    }
    space = getattr(study.sampler, "_search_space", None)  # GridSampler's grid; define-by-run has none
    if isinstance(space, Mapping):
        config["search_space"] = {str(name): list(values) for name, values in space.items()}
    return config
