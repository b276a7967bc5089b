"""The cost per trial of trainwire's Optuna callbacks: the same study with and without them."""

from __future__ import annotations

import time
from typing import Any

from context import Context
from records import Figure, Measurement, Target, median, round_ratios

__all__ = ["FIGURES"]

#: intermediate values each trial reports (each an `eval.completed` with the callbacks)
REPORTS = 5


def _objective(trial: Any) -> float:
    """A trial as cheap as Optuna allows, so that what the callbacks add shows."""
    x = trial.suggest_float("x", -2.0, 2.0)
    for step in range(1, REPORTS + 1):
        trial.report((x - 1) ** 2 / step, step)
        trial.should_prune()
    return (x - 1) ** 2


def _study_time(trials: int, output_dir: Any | None) -> float:
    """Seconds a study of `trials` trials takes, written to `output_dir` when given."""
    import optuna

    from trainwire.integrations.optuna import OptunaSearch

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    started = time.perf_counter()
    if output_dir is None:
        study.optimize(_objective, n_trials=trials)
    else:
        with OptunaSearch(study, output_dir, n_trials=trials, signals=False, heartbeat_interval_s=None) as search:
            study.optimize(search.objective(_objective), n_trials=trials, callbacks=[search])
    return time.perf_counter() - started


def _per_trial_time(ctx: Context, trials: int, written: bool) -> float:
    """Seconds per trial: the difference between a study of `2 * trials` trials and one of
    `trials`, so that what a study pays once (the run's start, its provenance) is left out."""

    def directory() -> Any:
        return ctx.scratch_dir("search") if written else None

    return (_study_time(2 * trials, directory()) - _study_time(trials, directory())) / trials


def _per_trial(ctx: Context) -> Measurement:
    trials, rounds = ctx.scale.trainer_steps, ctx.scale.emitter_rounds
    _study_time(2, ctx.scratch_dir("search-warmup"))  # imports and first-call costs out of the rounds
    with_callbacks, without = [], []
    for _ in range(rounds):
        with_callbacks.append(_per_trial_time(ctx, trials, written=True))
        without.append(_per_trial_time(ctx, trials, written=False))
    added_ms = (median(with_callbacks) - median(without)) * 1e3
    ratios = round_ratios(with_callbacks, without)
    return Measurement(
        added_ms,
        median(without) * 1e3,
        ratio=median(ratios),
        notes=f"{2 * trials} against {trials} trials of {REPORTS} reports each, in-memory storage, {rounds} interleaved rounds; "
        f"value: ms added per trial (trial.started, {REPORTS} evals, trial.ended), baseline: the study's own ms "
        f"per trial with an objective that does nothing else (ratio {min(ratios):.2f}-{max(ratios):.2f})",
    )


FIGURES = [
    Figure(
        "Optuna callbacks, cost per trial",
        "ms",
        Target("<= 5 ms added per trial", "value_at_most", 5.0),
        _per_trial,
    ),
]
