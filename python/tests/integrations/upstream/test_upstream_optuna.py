"""Optuna's callback and pruner conventions, held over a built-in callback
(`MaxTrialsCallback`) and trainwire's `OptunaSearch`.

Follows the callback and pruning tests of Optuna 5.0 (`tests/study_tests/test_study.py`:
`callbacks=` called once per finished trial with the study and the frozen trial, whatever its
state, a callback's `study.stop()`; `tests/pruners_tests`: `trial.report` with
`trial.should_prune()` raising `TrialPruned`), written anew in their style. What trainwire
does differently on purpose is in docs/integrations.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import optuna
import pytest
from support.stream_files import stream_of

from trainwire.integrations.optuna import OptunaSearch
from trainwire.reader.invariants import check_stream

CALLBACKS = ["builtin", "trainwire"]
optuna.logging.set_verbosity(optuna.logging.WARNING)


class Recording:
    """A callback recording each call, to wrap the one under test."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.calls = inner, []

    def __call__(self, study: optuna.Study, trial: optuna.trial.FrozenTrial) -> None:
        self.calls.append((trial.number, trial.state))
        self.inner(study, trial)


def objective(trial: optuna.Trial) -> float:
    x = trial.suggest_float("x", -1, 1)
    if trial.number == 1:
        raise ValueError("a broken trial")
    for step in range(3):
        trial.report(x**2 + (3 - step), step)
        if trial.should_prune():
            raise optuna.TrialPruned()
    return x**2


def study_run(tmp_path: Path, kind: str, n_trials: int, **options: Any) -> tuple[optuna.Study, Recording]:
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0), pruner=optuna.pruners.NopPruner())
    if kind == "builtin":
        callback = Recording(optuna.study.MaxTrialsCallback(100))
        study.optimize(objective, n_trials=n_trials, callbacks=[callback], catch=(ValueError,), **options)
    else:
        with OptunaSearch(study, tmp_path, n_trials=n_trials, step_interval_s=0) as search:
            callback = Recording(search)
            study.optimize(
                search.objective(objective), n_trials=n_trials, callbacks=[callback], catch=(ValueError,), **options
            )
    return study, callback


@pytest.mark.parametrize("kind", CALLBACKS)
def test_a_callback_is_called_once_per_finished_trial_whatever_its_state(tmp_path: Path, kind: str) -> None:
    study, callback = study_run(tmp_path, kind, 3)
    states = [state for _, state in callback.calls]
    assert [number for number, _ in callback.calls] == [0, 1, 2]
    assert states == [trial.state for trial in study.trials]
    assert optuna.trial.TrialState.FAIL in states
    if kind == "trainwire":
        stream = stream_of(tmp_path / "progress.jsonl")
        assert check_stream((tmp_path / "progress.jsonl").read_bytes()) == []
        ended = [(line["trial"], line["status"]) for line in stream if line["event"] == "trial.ended"]
        assert ended == [(1, "succeeded"), (2, "failed"), (3, "succeeded")]


@pytest.mark.parametrize("kind", CALLBACKS)
def test_a_pruned_trial_reaches_the_callbacks_pruned(tmp_path: Path, kind: str) -> None:
    study = optuna.create_study(pruner=optuna.pruners.ThresholdPruner(upper=2.5))
    pruned: list[int] = []

    def note(study: optuna.Study, trial: optuna.trial.FrozenTrial) -> None:
        if trial.state == optuna.trial.TrialState.PRUNED:
            pruned.append(trial.number)

    def run_trials(wrap: Any, callbacks: list[Any]) -> None:
        study.optimize(wrap(objective), n_trials=1, callbacks=[*callbacks, note])

    if kind == "builtin":
        run_trials(lambda function: function, [optuna.study.MaxTrialsCallback(10)])
    else:
        with OptunaSearch(study, tmp_path, n_trials=1, step_interval_s=0) as search:
            run_trials(search.objective, [search])
    assert pruned == [0]
    if kind == "trainwire":  # the values reported before the pruning are the trial's evaluations
        stream = stream_of(tmp_path / "progress.jsonl")
        assert [line["step"] for line in stream if line["event"] == "eval.completed"] == [0]
        assert [line["status"] for line in stream if line["event"] == "trial.ended"] == ["pruned"]


class StopAfterTwo:
    def __call__(self, study: optuna.Study, trial: optuna.trial.FrozenTrial) -> None:
        if trial.number == 1:
            study.stop()


@pytest.mark.parametrize("kind", CALLBACKS)
def test_a_callback_that_stops_the_study_ends_optimize_after_the_trial(tmp_path: Path, kind: str) -> None:
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))

    def simple(trial: optuna.Trial) -> float:
        return trial.suggest_float("x", -1, 1) ** 2

    if kind == "builtin":
        study.optimize(simple, n_trials=10, callbacks=[optuna.study.MaxTrialsCallback(10), StopAfterTwo()])
    else:
        with OptunaSearch(study, tmp_path, n_trials=10, step_interval_s=0) as search:
            study.optimize(search.objective(simple), n_trials=10, callbacks=[search, StopAfterTwo()])
        # another callback's stop is the study's end, not a trainwire stop
        assert search.run.status == "succeeded"
    assert len(study.trials) == 2


@pytest.mark.parametrize("kind", CALLBACKS)
def test_callbacks_run_with_threads(tmp_path: Path, kind: str) -> None:
    study, callback = study_run(tmp_path, kind, 4, n_jobs=2)
    assert sorted(number for number, _ in callback.calls) == [0, 1, 2, 3]
    if kind == "trainwire":
        assert check_stream((tmp_path / "progress.jsonl").read_bytes()) == []
        stream = stream_of(tmp_path / "progress.jsonl")
        assert sorted(line["trial"] for line in stream if line["event"] == "trial.ended") == [1, 2, 3, 4]
