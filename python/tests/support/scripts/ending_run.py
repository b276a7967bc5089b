"""A small search that ends one way: `ending_run.py OUTPUT_DIR ENDING`, for the endings matrix.

Trials 1 and 3 end `succeeded` (3 is the best, loss 0.25 and validation accuracy 0.8,
`layers=3`), trial 2 `failed` after reaching a lower loss (1e-05) and a higher accuracy (0.9):
no best of the search. Trial 4 then trains, saving a checkpoint
at its step 5, until its ending: `succeeded` and `full_disk` run 20 steps and finish (with
a final checkpoint); `failed` raises at step 12; `control_file`, `sigint` and `sigterm` go on
until the stop control honours the stop; `sigkill` and `silent` go on until the test kills or
stops the process. Prints `ready` once trial 4 saved its checkpoint.
"""

from __future__ import annotations

import sys
import time

from trainwire.stop import StopControl
from trainwire.writer.run import Run

#: trial -> (params, status, losses, validation accuracy)
TRIALS = {
    1: ({"layers": 2, "lr": 0.01, "opt": "adam"}, "succeeded", [1.0, 0.75, 0.5], 0.5),
    2: ({"layers": 4, "lr": 0.1, "opt": "sgd"}, "failed", [0.5, 0.01, 1e-05], 0.9),
    3: ({"layers": 3, "lr": 0.001, "opt": "adam"}, "succeeded", [0.75, 0.5, 0.25], 0.8),
}
BEST = {"trial": 3, "metric": "loss", "value": 0.25}


def search(run: Run) -> None:
    step = 0
    for trial, (params, status, losses, accuracy) in TRIALS.items():
        run.trial_started(trial, params)
        for loss in losses:
            step += 1
            run.step(step, loss=loss)
        run.eval(step, {"accuracy": accuracy}, split="validation", trial=trial)
        run.trial_ended(trial, status, metrics={"loss": losses[-1]}, best=BEST if trial != 2 else None)


def train(run: Run, control: StopControl, ending: str) -> None:
    run.trial_started(4, {"layers": 1, "lr": 0.5, "opt": "sgd"})
    stopped = None
    step = 0
    while stopped is None:
        step += 1
        run.step(100 + step, loss=0.5 + 1.0 / step)  # never better than the best trial's
        if step == 5:
            run.checkpoint(105, "ckpt/step-105", trial=4)
            print("ready", flush=True)
        if ending == "failed" and step == 12:
            run.trial_ended(4, "failed", error=RuntimeError("diverged"))
            raise RuntimeError("diverged")
        if ending in ("succeeded", "full_disk") and step == 20:
            run.trial_ended(4, "succeeded", metrics={"loss": 0.55}, best=BEST)
            run.finish("succeeded", checkpoint="ckpt/final")
            return
        stopped = control.check()
        time.sleep(0.02)
    run.trial_ended(4, "pruned")
    run.finish("interrupted", reason=stopped.finish_reason)


def main(output_dir: str, ending: str) -> int:
    run = Run(output_dir, step_interval_s=0, heartbeat_interval_s=0.5)
    run.start(total_steps=None, total_trials=4, provenance=False, config={"search": "endings"})
    control = StopControl(output_dir, run=run, check_interval_s=0).install_signal_handlers()
    with run:
        search(run)
        train(run, control, ending)
    return run.exit_code if run.exit_code is not None else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
