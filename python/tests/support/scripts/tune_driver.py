"""The driver of a Ray Tune experiment written by `TuneSearch`, for a signal sent to it:
`tune_driver.py RAY_ADDRESS OUTPUT_DIR` joins the Ray cluster at RAY_ADDRESS, runs one
trial of a tiny torch model for up to `STEPS` iterations and exits with the run's code."""

from __future__ import annotations

import os
import sys
from typing import Any

import ray
import torch
from ray import tune

from trainwire.integrations.ray_tune import TuneSearch

STEPS = 500  # far more than a stopped experiment reaches


def trainable(config: dict[str, Any]) -> None:
    torch.manual_seed(0)
    model = torch.nn.Linear(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=config["lr"])
    inputs, targets = torch.randn(16, 2), torch.randn(16, 1)
    for _ in range(STEPS):
        loss = torch.nn.functional.mse_loss(model(inputs), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        tune.report({"loss": loss.item()})


def main(address: str, output_dir: str) -> int:
    # The trials' workers import trainwire from the same sources as this driver.
    ray.init(
        address=address, log_to_driver=False, runtime_env={"env_vars": {"PYTHONPATH": os.environ.get("PYTHONPATH", "")}}
    )
    with TuneSearch(output_dir, metric="loss", total_trials=1, step_interval_s=0, check_interval_s=0) as search:
        tuner = tune.Tuner(
            trainable,
            param_space={"lr": 0.01},
            run_config=tune.RunConfig(
                name="signalled", storage_path=search.storage_path, callbacks=[search], stop=search.stopper, verbose=0
            ),
        )
        tuner.fit()
    return search.run.exit_code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
