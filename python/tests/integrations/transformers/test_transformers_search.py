"""`Trainer.hyperparameter_search` (Optuna backend) with `attach()`: the search is one run and
each trial a trial of it, with its own steps, evaluations and checkpoints; a pruned trial,
a failed one and a stop mid-search."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import optuna
import pytest
from support.stream_files import stream_of
from transformers import TrainerCallback

from trainwire.cli.demo_model import build_model, build_trainer
from trainwire.integrations.transformers import attach
from trainwire.stop import request_stop

optuna.logging.set_verbosity(optuna.logging.ERROR)


def of(events: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [event for event in events if event["event"] == name]


def searching_trainer(tmp_path: Path, **arguments: Any) -> Any:
    """The tiny Trainer, a new model per trial (`model_init`), attached with an owned run."""
    trainer = build_trainer(tmp_path, max_steps=3, eval_strategy="steps", eval_steps=3, **arguments)
    trainer.model_init = lambda trial=None: build_model()
    attach(trainer, check_interval_s=0, step_interval_s=0)
    return trainer


def learning_rate_space(trial: Any) -> dict[str, Any]:
    return {"learning_rate": trial.suggest_float("learning_rate", 1e-4, 1e-2, log=True)}


def test_a_search_is_one_run_whose_trials_have_their_steps_evaluations_and_checkpoints(tmp_path: Path) -> None:
    trainer = searching_trainer(tmp_path, save_strategy="steps", save_steps=3)
    best = trainer.hyperparameter_search(
        hp_space=learning_rate_space, n_trials=3, direction="minimize", backend="optuna"
    )
    events = stream_of(tmp_path / "progress.jsonl")
    assert len({event["run_id"] for event in events}) == 1
    assert events[0]["event"] == "run.started" and events[0]["total_trials"] == 3
    started = of(events, "trial.started")
    assert [event["trial"] for event in started] == [1, 2, 3]
    assert all(set(event["params"]) == {"learning_rate"} for event in started)
    assert of(events, "train.restarted") == []
    assert [(e["trial"], e["step"]) for e in of(events, "train.step")] == [(n, s) for n in (1, 2, 3) for s in (1, 2, 3)]
    assert [(e["trial"], e["step"]) for e in of(events, "eval.completed")] == [(1, 3), (2, 3), (3, 3)]
    checkpoints = of(events, "checkpoint.saved")
    assert [(e["trial"], Path(e["path"]).parent.name) for e in checkpoints] == [(n, f"run-{n - 1}") for n in (1, 2, 3)]
    assert all((tmp_path / e["path"]).is_dir() for e in checkpoints)
    ended = of(events, "trial.ended")
    assert [(e["trial"], e["status"]) for e in ended] == [(n, "succeeded") for n in (1, 2, 3)]
    assert ended[-1]["best"] == {"trial": int(best.run_id) + 1, "metric": "objective", "value": best.objective}
    assert events[-1]["event"] == "run.finished" and events[-1]["status"] == "succeeded"


def test_a_pruned_trial_ends_pruned_and_a_failing_trial_fails_the_search(tmp_path: Path) -> None:
    class FailsInTrialTwo(TrainerCallback):
        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if trainer._trial.number == 1 and state.global_step == 2:
                raise ValueError("diverged")

    trainer = searching_trainer(tmp_path)
    trainer.add_callback(FailsInTrialTwo())
    with pytest.raises(ValueError, match="diverged"):
        # Every evaluation's loss is above 0: the first trial is pruned at its report.
        trainer.hyperparameter_search(
            hp_space=learning_rate_space, n_trials=3, backend="optuna", pruner=optuna.pruners.ThresholdPruner(upper=0)
        )
    events = stream_of(tmp_path / "progress.jsonl")
    ended = of(events, "trial.ended")
    assert [(e["trial"], e["status"]) for e in ended] == [(1, "pruned"), (2, "failed")]
    assert ended[1]["error"]["message"] == "diverged"
    assert [e["status"] for e in of(events, "phase.ended") if e.get("trial") == 2] == ["failed"]
    assert events[-1]["event"] == "run.finished" and events[-1]["status"] == "failed"


def test_a_stop_ends_the_search_after_the_running_trial(tmp_path: Path) -> None:
    class StopsInTrialTwo(TrainerCallback):
        def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if trainer._trial.number == 1 and state.global_step == 1:
                request_stop(tmp_path, reason="enough")

    trainer = searching_trainer(tmp_path)
    trainer.add_callback(StopsInTrialTwo())
    trainer.hyperparameter_search(hp_space=learning_rate_space, n_trials=5, backend="optuna")
    events = stream_of(tmp_path / "progress.jsonl")
    assert [e["trial"] for e in of(events, "trial.started")] == [1, 2]
    assert [e["step"] for e in of(events, "train.step") if e["trial"] == 2][-1] < 3
    assert events[-1]["event"] == "run.finished" and events[-1]["status"] == "interrupted"
    assert (events[-1]["reason"], events[-1]["exit_code"]) == ("control_file", 2)
    assert Path(events[-1]["checkpoint"]).parent.name == "run-1"  # the trial's own folder
