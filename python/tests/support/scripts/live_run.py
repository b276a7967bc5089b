"""A live run for the dashboard tests: `live_run.py OUTPUT_DIR [--steps N] [--restart-at K]`.

A training-like loop without torch: a step every 50 ms with a falling loss, an
evaluation and a checkpoint every 10 steps, an out-of-memory restart at step K, a stop
checked at every step. On a stop it saves a checkpoint, ends `interrupted` and exits 2.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

from trainwire import Run, StopControl


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("output_dir", type=Path)
    parser.add_argument("--steps", type=int, default=4000)
    parser.add_argument("--restart-at", type=int, default=12)
    parser.add_argument("--step-delay", type=float, default=0.05)
    options = parser.parse_args()
    run = Run(options.output_dir, step_interval_s=0, heartbeat_interval_s=2)
    run.start(total_steps=options.steps, config={"lr": 3e-4, "batch_size": 16, "model": "tiny"}, seed=1)
    stop = StopControl(options.output_dir, run=run, check_interval_s=0.05)
    checkpoint = None
    with run.phase("train"):
        step = 0
        restarted = False
        while step < options.steps:
            step += 1
            run.step(step, loss=2.5 * math.exp(-step / 80) + 0.3, learning_rate=3e-4, epoch=step / 100)
            if step == options.restart_at and not restarted:
                restarted = True
                run.restarted("oom", step=step - 4, batch_size_from=16, batch_size_to=8)
                step -= 4
            if step % 10 == 0:
                run.eval(step, {"loss": 2.4 * math.exp(-step / 90) + 0.35, "accuracy": min(0.99, step / 200)})
                checkpoint = _save(run, options.output_dir, step, "periodic")
            if stop.check() is not None:
                checkpoint = _save(run, options.output_dir, step, "stop")
                break
            time.sleep(options.step_delay)
    if stop.honoured is not None:
        run.finish("interrupted", reason=stop.honoured.finish_reason, checkpoint=checkpoint)
    else:
        run.finish("succeeded", checkpoint=checkpoint)
    return run.exit_code or 0


def _save(run: Run, output_dir: Path, step: int, reason: str) -> Path:
    path = output_dir / f"checkpoint-{step}"
    path.mkdir(exist_ok=True)
    (path / "weights.txt").write_text(f"step {step}\n")
    run.checkpoint(step, path, reason=reason)
    return path


if __name__ == "__main__":
    sys.exit(main())
