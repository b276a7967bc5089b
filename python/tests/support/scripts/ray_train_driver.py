"""The driver of a Ray Train job of 2 CPU workers (gloo) writing one stream from rank 0:
`ray_train_driver.py OUTPUT_DIR MAX_STEPS`. Starts its own local Ray; each worker fits a tiny
model, checks `agreed_stop` every step, and writes `rank-<N>.json` ({"step", "status"}) when
its loop ends. Exits with the run's code (`TrainDriver.exit_code`)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import ray
import ray.train
import ray.train.torch
import torch
from ray.train import RunConfig, ScalingConfig
from ray.train.torch import TorchTrainer

from trainwire import Run, RunInterrupted, StopControl
from trainwire.integrations.distributed import agreed_stop
from trainwire.integrations.ray_train import TrainDriver

STEP_WORK_S = 0.02  # stands in for a real model's work, so that a stop arrives mid-training


def train_loop(config: dict[str, Any]) -> None:
    context = ray.train.get_context()
    torch.manual_seed(0)
    model = ray.train.torch.prepare_model(torch.nn.Linear(2, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    inputs, targets = torch.randn(16, 2), torch.randn(16, 1)
    run = Run(config["output_dir"], step_interval_s=0)  # writes on global rank 0 only
    stop = StopControl(config["output_dir"] if run.active else None, run=run, check_interval_s=0)
    step = 0
    try:
        with run:
            run.start(total_steps=config["steps"], world_size=context.get_world_size())
            with run.phase("train"):
                for step in range(1, config["steps"] + 1):
                    time.sleep(STEP_WORK_S)
                    loss = torch.nn.functional.mse_loss(model(inputs), targets)
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                    run.step(step, loss=loss.item())
                    found = agreed_stop(stop)
                    if found is not None:
                        raise RunInterrupted(found.finish_reason)
    except RunInterrupted:
        pass
    ended = {"step": step, "status": run.status}
    (Path(config["output_dir"]) / f"rank-{context.get_world_rank()}.json").write_text(json.dumps(ended))


def main(output_dir: str, steps: int) -> int:
    # The workers import trainwire from the same sources as this driver.
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": os.environ.get("PYTHONPATH", "")}},
    )
    trainer = TorchTrainer(
        train_loop,
        train_loop_config={"output_dir": output_dir, "steps": steps},
        scaling_config=ScalingConfig(num_workers=2, use_gpu=False),
        run_config=RunConfig(name="ray-train", storage_path=str(Path(output_dir) / "ray")),
    )
    with TrainDriver(output_dir) as driver:
        trainer.fit()
    ray.shutdown()
    return driver.exit_code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2])))
