"""One rank of a 2-process CPU DDP training: `ddp_rank.py OUTPUT_DIR MAX_STEPS`.

Expects RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT in the environment.
Prints `{"rank", "global_step", "stopped"}` as JSON when training returns; exits 2 after
a stop, 0 otherwise.
"""

from __future__ import annotations

import json
import sys
from datetime import timedelta

import torch.distributed as dist

from trainwire.cli.demo_model import StepDelay, build_trainer
from trainwire.integrations.transformers import attach


def main(output_dir: str, max_steps: int) -> int:
    # Our own gloo group with a timeout: `ddp_timeout` is ignored with use_cpu=True, and a
    # broken stop must fail the test instead of hanging it.
    dist.init_process_group("gloo", timeout=timedelta(seconds=60))
    trainer = build_trainer(output_dir, max_steps=max_steps, use_cpu=True)
    trainer.add_callback(StepDelay(0.03))
    callback = attach(trainer, step_interval_s=0)
    trainer.train()
    print(json.dumps({"rank": dist.get_rank(), "global_step": trainer.state.global_step, "stopped": callback.stopped}))
    dist.barrier()
    dist.destroy_process_group()
    return 2 if callback.stopped else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2])))
