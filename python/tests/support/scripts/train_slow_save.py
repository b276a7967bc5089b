"""`train_slow_save.py OUTPUT_DIR`: a stoppable training whose checkpoint save takes a minute.

A first SIGTERM starts a graceful stop; the save then blocks, so a second SIGTERM always
arrives while the process is still stopping and must kill it the hard way.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from transformers import TrainerCallback

from trainwire.cli.demo_model import StepDelay, build_trainer
from trainwire.contract.errors import RunInterrupted
from trainwire.integrations.transformers import attach
from trainwire.stop import StopControl
from trainwire.writer.run import Run


class SlowSave(TrainerCallback):
    def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        time.sleep(60)


def main(output_dir: str) -> int:
    run = Run(output_dir, step_interval_s=0)
    stop = StopControl(output_dir, run=run).install_signal_handlers()
    try:
        with run:
            run.start(total_steps=None, provenance=False)
            trainer = build_trainer(output_dir, max_steps=100_000)
            trainer.add_callback(StepDelay(0.02))
            trainer.add_callback(SlowSave())
            callback = attach(trainer, run, stop=stop)
            trainer.train()
            callback.raise_if_stopped()
    except RunInterrupted:
        pass
    return run.exit_code if run.exit_code is not None else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
