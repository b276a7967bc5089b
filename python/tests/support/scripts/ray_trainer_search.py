"""A transformers `Trainer.hyperparameter_search(backend="ray")` with `attach()`, in a fresh
driver process as a user runs it: `ray_trainer_search.py RAY_ADDRESS OUTPUT_DIR search|stop`
joins the Ray cluster at RAY_ADDRESS, searches over the tiny model (two learning rates; or
one trial stopped through the control file after its first report) and prints one JSON line:
the best run, whether the callback and its wrappers are back on the Trainer, the run's
status and exit code. (A fresh process: Tune pickles the Trainer, and what other code of a
long-lived process left in shared state, such as a process group, may not pickle.)"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import ray
from ray import tune
from transformers import TrainerCallback

from trainwire.cli.demo_model import StepDelay, build_model, build_trainer
from trainwire.integrations.transformers import TrainwireCallback, attach
from trainwire.stop import request_stop


class StopsAtStepFour(TrainerCallback):
    """In Tune's worker: asks the search to stop through the control file of its output
    directory, after the trial's first report (transformers' own search looks up the best
    trial's `objective` when Tune returns, and raises when no trial reported one)."""

    def __init__(self, output_dir: Path) -> None:
        self.output_dir = output_dir

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if state.global_step == 4:
            request_stop(self.output_dir)


def main(address: str, output_dir: str, mode: str) -> int:
    # Tune's workers import trainwire and this file's callbacks from the driver's path.
    here = str(Path(__file__).resolve().parent)
    path = os.pathsep.join([here, os.environ.get("PYTHONPATH", "")])
    ray.init(address=address, log_to_driver=False, runtime_env={"env_vars": {"PYTHONPATH": path}})
    steps, eval_steps = (3, 3) if mode == "search" else (200, 2)
    trainer = build_trainer(Path(output_dir), max_steps=steps, eval_strategy="steps", eval_steps=eval_steps)
    trainer.model_init = lambda trial=None: build_model()
    callback = attach(trainer, check_interval_s=0, step_interval_s=0)
    if mode == "search":
        space = {"learning_rate": tune.grid_search([1e-3, 1e-2])}
        best = trainer.hyperparameter_search(hp_space=lambda _: space, n_trials=1, backend="ray", verbose=0)
        found = {"hyperparameters": best.hyperparameters, "objective": best.objective}
    else:
        trainer.add_callback(StepDelay(0.03))  # 6 s of training: the stop comes long before its end
        trainer.add_callback(StopsAtStepFour(Path(output_dir)))
        trainer.hyperparameter_search(hp_space=lambda _: {"learning_rate": 1e-3}, n_trials=1, backend="ray", verbose=0)
        found = None
    run = callback.run
    print(
        json.dumps(
            {
                "best": found,
                "callbacks_back": [cb for cb in trainer.callback_handler.callbacks if isinstance(cb, TrainwireCallback)]
                == [callback],
                "wrapped": "train" in trainer.__dict__,
                "status": run.status if run is not None else None,
                "exit_code": run.exit_code if run is not None else None,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
