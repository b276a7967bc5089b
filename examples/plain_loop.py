"""A plain PyTorch loop with trainwire, in one process or under torchrun.

    python examples/plain_loop.py OUTPUT_DIR [--steps N]
    torchrun --nproc-per-node 2 examples/plain_loop.py OUTPUT_DIR [--steps N]

The stream goes to OUTPUT_DIR/progress.jsonl (global rank 0 only). `trainwire stop
OUTPUT_DIR`, SIGTERM or Ctrl+C stop every rank after the same step with one checkpoint;
the process exits 2.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import torch
import torch.distributed as dist

from trainwire import Run, RunInterrupted, StopControl
from trainwire.integrations.distributed import agreed_stop


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="A plain PyTorch loop writing a trainwire stream.")
    parser.add_argument("output_dir")
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--eval-every", type=int, default=10)
    parser.add_argument("--step-delay", type=float, default=0.0, help="seconds of extra work per step")
    options = parser.parse_args(argv)

    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if world_size > 1:
        dist.init_process_group("gloo")  # torchrun set RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    if world_size > 1:
        model = torch.nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

    def save_model(step: int | None) -> str:
        path = os.path.join(options.output_dir, f"checkpoint-{step}.pt")
        torch.save({"model": model.state_dict(), "step": step}, path)
        return path

    # A no-op on every rank but global rank 0, where a stop saves the checkpoint `run.finished` names.
    run = Run(options.output_dir, step_interval_s=0, on_stop=save_model)
    # Rank 0 watches the control file; every rank takes SIGINT/SIGTERM.
    stop = StopControl(options.output_dir if run.active else None, run=run).install_signal_handlers()

    def loss_of(inputs: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.mse_loss(model(inputs), inputs.sum(dim=1, keepdim=True))

    step = 0
    try:
        with run:  # run.finished: succeeded, failed (and re-raises) or interrupted
            run.start(total_steps=options.steps, config=vars(options), world_size=world_size)
            with run.phase("train"):  # ends interrupted on a stop
                for step in range(1, options.steps + 1):
                    time.sleep(options.step_delay)  # stands in for a real model's work
                    loss = loss_of(torch.randn(8, 4))
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                    run.step(step, loss=loss.item(), learning_rate=0.05)
                    if step % options.eval_every == 0:
                        with torch.no_grad():
                            run.eval(step, {"loss": loss_of(torch.randn(32, 4)).item()})
                    found = agreed_stop(stop)  # every rank, every step: all stop at the same one
                    if found is not None:  # the block calls on_stop (rank 0) and ends interrupted
                        raise RunInterrupted(found.finish_reason)
            if run.active:
                run.checkpoint(step, save_model(step), reason="final")
    except RunInterrupted:
        pass
    print(f"rank {int(os.environ.get('RANK', '0'))} ended {run.status} at step {step}", flush=True)
    if world_size > 1:
        dist.barrier()  # leave together: torchrun stops the others when one rank exits first
        dist.destroy_process_group()
    return run.exit_code or 0


if __name__ == "__main__":
    sys.exit(main())
