"""Optuna studies written by `trainwire.integrations.optuna` against the real engine: trials,
intermediate values, pruned and failed trials, threads, several objectives, a stop mid-sweep
(control file and SIGTERM), a resumed study and two worker processes on one storage."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import optuna
import pytest
from support.cli_process import trainwire
from support.paths import ROOT
from support.stream_files import stream_of

from trainwire.integrations.optuna import OptunaSearch
from trainwire.stop import request_stop

optuna.logging.set_verbosity(optuna.logging.ERROR)
STREAM = "progress.jsonl"


def of(events: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [event for event in events if event["event"] == name]


def ended(events: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    return {event["trial"]: event for event in of(events, "trial.ended")}


def quadratic(search: OptunaSearch, steps: int = 3) -> Any:
    """An objective that trains a few steps through the search's run and reports each."""

    def objective(trial: Any) -> float:
        x = trial.suggest_float("x", -2.0, 2.0)
        trial.should_prune()  # the parameters are sampled: the trial is announced
        for step in range(1, steps + 1):
            search.run.step(step, loss=(x - 1) ** 2 / step)
            trial.report((x - 1) ** 2 / step, step)
        return (x - 1) ** 2

    return objective


def test_a_study_writes_each_trial_with_params_steps_reports_status_and_the_best_after_it(tmp_path: Path) -> None:
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    with OptunaSearch(study, tmp_path, n_trials=4, step_interval_s=0) as search:
        inner = quadratic(search)

        def objective(trial: Any) -> float:
            if trial.number == 1:
                trial.report(9.0, 1)
                raise optuna.TrialPruned()
            if trial.number == 2:
                raise ValueError("diverged")
            return inner(trial)

        study.optimize(search.objective(objective), n_trials=4, callbacks=[search], catch=(ValueError,))
    events = stream_of(tmp_path / STREAM)
    assert events[0]["total_trials"] == 4 and events[0]["config"]["directions"] == ["minimize"]
    started = of(events, "trial.started")
    assert [event["trial"] for event in started] == [1, 2, 3, 4]
    assert [set(event["params"]) for event in started] == [{"x"}, set(), set(), {"x"}]
    by_trial = ended(events)
    assert [by_trial[n]["status"] for n in (1, 2, 3, 4)] == ["succeeded", "pruned", "failed", "succeeded"]
    assert by_trial[3]["error"]["message"] == "diverged"
    assert by_trial[1]["metrics"] == {"objective": study.trials[0].value}
    assert by_trial[4]["best"] == {
        "trial": study.best_trial.number + 1,
        "metric": "objective",
        "value": study.best_value,
    }
    assert [(e["trial"], e["step"]) for e in of(events, "train.step")] == [(n, s) for n in (1, 4) for s in (1, 2, 3)]
    assert [(e["trial"], e["step"]) for e in of(events, "eval.completed")][:4] == [(1, 1), (1, 2), (1, 3), (2, 1)]
    assert events[-1]["event"] == "run.finished" and events[-1]["status"] == "succeeded"


def test_an_error_optuna_does_not_catch_ends_the_trial_and_the_run_failed(tmp_path: Path) -> None:
    study = optuna.create_study()

    def objective(trial: Any) -> float:
        raise RuntimeError("no data")

    with pytest.raises(RuntimeError), OptunaSearch(study, tmp_path, n_trials=3) as search:
        study.optimize(search.objective(objective), n_trials=3, callbacks=[search])
    events = stream_of(tmp_path / STREAM)
    assert [e["status"] for e in of(events, "trial.ended")] == ["failed"]
    assert events[-1]["status"] == "failed" and search.run.exit_code == 1


def test_threads_write_one_consistent_stream_each_step_in_its_trial(tmp_path: Path) -> None:
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=1))
    with OptunaSearch(study, tmp_path, n_trials=6, step_interval_s=0) as search:
        study.optimize(search.objective(quadratic(search)), n_trials=6, n_jobs=2, callbacks=[search])
    events = stream_of(tmp_path / STREAM)
    assert sorted(ended(events)) == [1, 2, 3, 4, 5, 6]
    for number, event in ended(events).items():
        steps = [e["step"] for e in of(events, "train.step") if e["trial"] == number]
        assert steps == [1, 2, 3] and event["status"] == "succeeded"
        assert event["metrics"]["objective"] == study.trials[number - 1].value


def test_a_multi_objective_study_records_every_value_and_no_single_best(tmp_path: Path) -> None:
    study = optuna.create_study(directions=["minimize", "maximize"])
    study.set_metric_names(["loss", "accuracy"])
    with OptunaSearch(study, tmp_path, n_trials=2) as search:
        study.optimize(
            search.objective(lambda trial: (trial.suggest_float("x", 0, 1), 0.5)), n_trials=2, callbacks=[search]
        )
    for event in ended(stream_of(tmp_path / STREAM)).values():
        assert set(event["metrics"]) == {"loss", "accuracy"} and "best" not in event


def test_a_stop_file_mid_sweep_ends_the_study_after_the_running_trial_interrupted(tmp_path: Path) -> None:
    study = optuna.create_study()
    with OptunaSearch(study, tmp_path, n_trials=10, check_interval_s=0) as search:

        def objective(trial: Any) -> float:
            if trial.number == 1:
                request_stop(tmp_path, reason="enough")
            return trial.suggest_float("x", 0, 1)

        study.optimize(search.objective(objective), n_trials=10, callbacks=[search])
    events = stream_of(tmp_path / STREAM)
    assert sorted(ended(events)) == [1, 2] and len(study.trials) == 2
    assert of(events, "stop.requested")[0]["reason"] == "enough"
    assert events[-1]["status"] == "interrupted" and events[-1]["reason"] == "control_file"
    assert search.run.exit_code == 2


def test_sigterm_mid_sweep_ends_the_study_after_the_running_trial_and_the_process_exits_2(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import os, signal, sys
        import optuna
        from trainwire.integrations.optuna import OptunaSearch

        study = optuna.create_study()
        def objective(trial):
            if trial.number == 1:
                os.kill(os.getpid(), signal.SIGTERM)
            return trial.suggest_float("x", 0, 1)

        with OptunaSearch(study, sys.argv[1], n_trials=10) as search:
            study.optimize(search.objective(objective), n_trials=10, callbacks=[search])
        sys.exit(search.run.exit_code)
        """
    )
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], timeout=120, env=_env())
    events = stream_of(tmp_path / STREAM)
    assert done.returncode == 2
    assert sorted(ended(events)) == [1, 2]
    assert events[-1]["status"] == "interrupted" and events[-1]["reason"] == "sigterm"


def test_a_resumed_study_on_the_same_storage_continues_the_trial_numbers(tmp_path: Path) -> None:
    storage = f"sqlite:///{tmp_path / 'study.db'}"
    for _ in range(2):
        study = optuna.create_study(study_name="resumed", storage=storage, load_if_exists=True)
        with OptunaSearch(study, tmp_path, n_trials=2) as search:
            study.optimize(
                search.objective(lambda trial: trial.suggest_float("x", 0, 1)), n_trials=2, callbacks=[search]
            )
    events = stream_of(tmp_path / STREAM)
    runs = [event["run_id"] for event in of(events, "run.started")]
    assert len(runs) == 2
    assert [(e["run_id"] == runs[1], e["trial"]) for e in of(events, "trial.ended")] == [
        (False, 1),
        (False, 2),
        (True, 3),
        (True, 4),
    ]


def test_two_worker_processes_on_one_storage_write_a_stream_each_whose_trials_together_are_the_study(
    tmp_path: Path,
) -> None:
    script = textwrap.dedent(
        """
        import sys
        import optuna
        from optuna.storages import JournalStorage
        from optuna.storages.journal import JournalFileBackend
        from trainwire.integrations.optuna import OptunaSearch

        storage = JournalStorage(JournalFileBackend(sys.argv[1]))
        study = optuna.create_study(study_name="shared", storage=storage, load_if_exists=True)
        with OptunaSearch(study, sys.argv[2], n_trials=3) as search:
            study.optimize(search.objective(lambda t: t.suggest_float("x", 0, 1)), n_trials=3, callbacks=[search])
        """
    )
    journal = str(tmp_path / "journal.log")
    workers = [
        subprocess.Popen([sys.executable, "-c", script, journal, str(tmp_path / f"worker-{n}")], env=_env())
        for n in (1, 2)
    ]
    assert [worker.wait(timeout=120) for worker in workers] == [0, 0]
    streams = [stream_of(tmp_path / f"worker-{n}" / STREAM) for n in (1, 2)]
    numbers = [sorted(ended(events)) for events in streams]
    assert sorted(numbers[0] + numbers[1]) == [1, 2, 3, 4, 5, 6]
    assert all(events[0]["config"]["study_name"] == "shared" for events in streams)


def _env() -> dict[str, str]:
    source = str(ROOT / "python" / "src")
    return {**os.environ, "PYTHONPATH": source + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _minimize_study_in(directory: Path, name: str) -> optuna.Study:
    """A named minimize study of 4 trials whose objective writes its steps right after
    suggesting (no other use of the trial first) and reports a value per step."""
    study = optuna.create_study(study_name=name, sampler=optuna.samplers.RandomSampler(seed=3))
    with OptunaSearch(study, directory, n_trials=4, step_interval_s=0) as search:

        def objective(trial: Any) -> float:
            x = trial.suggest_float("x", -2.0, 2.0)
            for step in range(1, 4):
                search.run.step(step, loss=(x - 1) ** 2 / step)
                trial.report((x - 1) ** 2 + 1 / step, step)
            return (x - 1) ** 2 + 1 / 3

        study.optimize(search.objective(objective), n_trials=4, callbacks=[search])
    return study


def test_each_trial_starts_before_its_first_step_even_when_the_objective_steps_before_reporting(
    tmp_path: Path,
) -> None:
    _minimize_study_in(tmp_path, "order")
    events = stream_of(tmp_path / STREAM)
    for number in (1, 2, 3, 4):
        kinds = [e["event"] for e in events if e.get("trial") == number]
        assert kinds[0] == "trial.started" and kinds.count("train.step") == 3
        started = next(e for e in of(events, "trial.started") if e["trial"] == number)
        assert set(started["params"]) == {"x"}


def test_a_minimize_study_is_named_and_its_best_is_the_lowest_in_the_summary_and_diff(tmp_path: Path) -> None:
    studies = [_minimize_study_in(tmp_path / name, name) for name in ("sweep-a", "sweep-b")]
    events = stream_of(tmp_path / "sweep-a" / STREAM)
    assert events[0]["name"] == "sweep-a"
    assert events[0]["objective"] == {"name": "eval/objective", "goal": "min"}
    lowest = [min(value for trial in study.trials for value in trial.intermediate_values.values()) for study in studies]
    compared = trainwire("diff", str(tmp_path / "sweep-a"), str(tmp_path / "sweep-b"), "--json")
    assert compared.returncode == 0, compared.stderr
    metrics = json.loads(compared.stdout)["metrics"]
    assert metrics["best eval/objective"] == lowest
    assert [objective["goal"] for objective in metrics["objective"]] == ["min", "min"]
    listed = json.loads(trainwire("runs", str(tmp_path), "--json").stdout)
    assert sorted(row["name"] for row in listed) == ["sweep-a", "sweep-b"]
