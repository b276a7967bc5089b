"""What an Optuna study says of its trials, read without importing optuna: shared by the
Optuna integration and transformers' Optuna-backed `hyperparameter_search`, which write
the same `trial.ended` for the same study. Optuna numbers trials from 0, the contract from
1: trainwire trial = Optuna number + 1."""

from __future__ import annotations

from typing import Any

__all__ = ["best_so_far", "objective_names", "trial_status"]

#: the trial status each final Optuna state (`TrialState.name`) is written as
STATUS_OF_STATE = {"COMPLETE": "succeeded", "PRUNED": "pruned", "FAIL": "failed"}


def trial_status(state: Any) -> str | None:
    """The status a trial in Optuna's `state` ended with; None while it has not ended."""
    return STATUS_OF_STATE.get(getattr(state, "name", ""))


def objective_names(study: Any) -> list[str]:
    """The study's metric names when it set them, else `objective` (`objective_1`, ... for several)."""
    names = study.metric_names
    if names:
        return list(names)
    count = len(study.directions)
    return ["objective"] if count == 1 else [f"objective_{index}" for index in range(count)]


def best_so_far(study: Any, metric_names: list[str]) -> dict[str, Any] | None:
    """The study's best trial as `trial.ended.best`; None for a multi-objective study (a
    Pareto front has no single best) or before the first completed trial."""
    if len(study.directions) != 1:
        return None
    try:
        best = study.best_trial
    except ValueError:
        return None
    return {"trial": best.number + 1, "metric": metric_names[0], "value": best.value}
