"""Accelerate with trainwire's tracker: `accelerate launch examples/accelerate_train.py OUTPUT_DIR`.

A tiny regression on random data, on CPU, in one process or several (`accelerate launch
--multi_gpu --num_processes 2`: with `Accelerator(cpu=True)` the processes use gloo). The tracker writes OUTPUT_DIR/progress.jsonl on the main process;
`trainwire stop OUTPUT_DIR`, SIGTERM or Ctrl+C stop every rank at the same step with a
checkpoint (`accelerator.save_state`), and each process exits 2. Needs
`pip install 'trainwire[transformers]'` (for accelerate and torch).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator

import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset

from trainwire.integrations.accelerate import TrainwireTracker


def endless(loader: DataLoader) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    while True:
        yield from loader


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output_dir")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--eval-every", type=int, default=10)
    parser.add_argument("--step-delay", type=float, default=0.0, help="seconds of extra work per step")
    options = parser.parse_args(argv)

    tracker = TrainwireTracker(options.output_dir, signals=True, total_steps=options.steps, step_interval_s=0)
    accelerator = Accelerator(cpu=True, log_with=[tracker])
    accelerator.init_trackers(
        "accelerate-example", config=vars(options), init_kwargs={"trainwire": {"tags": ["example"]}}
    )
    torch.manual_seed(0)
    inputs = torch.randn(256, 4)
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    loader = DataLoader(TensorDataset(inputs, inputs.sum(dim=1, keepdim=True)), batch_size=8, shuffle=True)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)

    step = 0
    with tracker:  # an exception ends the run failed
        for step, (batch_inputs, targets) in enumerate(endless(loader), start=1):
            loss = torch.nn.functional.mse_loss(model(batch_inputs), targets)
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
            time.sleep(options.step_delay)  # stands in for a real model's work
            accelerator.log({"loss": loss.item(), "lr": 0.05}, step=step)
            if step % options.eval_every == 0:
                accelerator.log({"eval/loss": loss.item()}, step=step)
            if tracker.decide_stop(step) is not None:  # every rank, every step
                path = f"{options.output_dir}/checkpoints/stop-step={step}"
                accelerator.save_state(path)
                tracker.checkpoint(step, path)
                break
            if step == options.steps:
                break
    accelerator.end_training()
    status = tracker.run.status if tracker.run is not None else "interrupted" if tracker.stopped else "succeeded"
    print(f"rank {accelerator.process_index} ended {status} at step {step}")
    return tracker.exit_code


if __name__ == "__main__":
    sys.exit(main())
