"""The trials of a transformers `Trainer.hyperparameter_search` (Optuna backend) as trials of
the one run the attached callback writes.

The Trainer calls `train(trial=...)` once per Optuna trial and tells no callback when the
objective returns: each trial's scope opens when its `train()` begins and the trial ends,
as the study recorded it (value, state, best so far), when the next one begins or the
search returns. A training that raised (other than a prune) ends its trial at once, with
the error, since Optuna may not go on to another trial. Trials are Optuna's `number + 1`,
as in `trainwire.integrations.optuna` (`core.study` reads the study for both).
"""

from __future__ import annotations

import contextlib
from typing import Any

import optuna
from optuna.trial import TrialState

from trainwire.integrations.core.study import best_so_far, objective_names, trial_status
from trainwire.writer.run import Run

__all__ = ["SearchTrials"]


class SearchTrials:
    """The open trial of a search's run: its scope on the training thread, its start and end."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self._trial: optuna.Trial | None = None
        self._announced = False
        self._scope = contextlib.ExitStack()

    @property
    def number(self) -> int | None:
        """The open trial (trainwire's number), None between trials."""
        return self._trial.number + 1 if self._trial is not None else None

    def begin(self, trial: Any) -> None:
        """`train(trial=trial)` begins: the last trial ends and `trial`'s scope opens
        (a trial that is not Optuna's, such as Ray's dict in a worker, is not followed)."""
        if self._trial is not None and trial is self._trial:
            return  # the same trial trains again (a batch-size retry)
        self.end()
        if isinstance(trial, optuna.Trial):
            self._trial, self._announced = trial, False
            self._scope.enter_context(self.run.trial_scope(trial.number + 1))

    def announce(self) -> None:
        """The trial's training starts: `trial.started` with its sampled params (once)."""
        if self._trial is not None and not self._announced:
            self._announced = True
            self.run.trial_started(self._trial.number + 1, self._trial.params)

    def fail(self, error: BaseException) -> None:
        """The trial's training raised: a prune is Optuna's to record, anything else ends
        the trial `failed` now."""
        if self._trial is None or isinstance(error, optuna.TrialPruned):
            return
        self.announce()
        self._close()
        self.run.trial_ended(self._trial.number + 1, "failed", error=error)
        self._trial = None

    def stop_study(self) -> None:
        """A stop was honoured: the study runs no further trial (`study.stop()`, called
        from within the objective as Optuna requires)."""
        if self._trial is not None:
            self._trial.study.stop()

    def end(self) -> None:
        """The open trial ends as the study recorded it."""
        self.announce()
        trial, self._trial = self._trial, None
        self._close()
        if trial is None:
            return
        study = trial.study
        frozen = next((past for past in study.get_trials(deepcopy=False) if past.number == trial.number), None)
        status = trial_status(frozen.state) if frozen is not None else None
        if frozen is None or status is None or frozen.state == TrialState.RUNNING:
            status = "failed"  # the objective never returned to Optuna (the search raised)
        names = objective_names(study)
        values = frozen.values if frozen is not None else None
        self.run.trial_ended(
            trial.number + 1,
            status,
            metrics=dict(zip(names, values or (), strict=False)),
            error="the trial did not complete" if status == "failed" else None,
            best=best_so_far(study, names),
        )

    def _close(self) -> None:
        self._scope.close()
        self._scope = contextlib.ExitStack()
