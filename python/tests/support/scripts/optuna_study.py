"""A live Optuna study for the dashboard tests: `optuna_study.py OUTPUT_DIR TRIALS STEPS`.

Each of at most TRIALS trials samples `x` and trains STEPS steps (one every 50 ms) through the
search's run, each step in the trial's scope; the study writes one stream through
`OptunaSearch` and exits with the run's exit code (2 after a stop).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import optuna

from trainwire.integrations.optuna import OptunaSearch


def main() -> int:
    output_dir, trials, steps = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=1))
    # every check reads the control file: a stop is seen when the running trial ends
    with OptunaSearch(study, output_dir, n_trials=trials, check_interval_s=0) as search:

        def objective(trial: Any) -> float:
            x = trial.suggest_float("x", -2.0, 2.0)
            for step in range(1, steps + 1):
                time.sleep(0.05)  # the training's own work
                search.run.step(step, loss=(x - 1) ** 2 + 1 / step)
            return (x - 1) ** 2

        study.optimize(search.objective(objective), n_trials=trials, callbacks=[search])
    return search.run.exit_code


if __name__ == "__main__":
    sys.exit(main())
