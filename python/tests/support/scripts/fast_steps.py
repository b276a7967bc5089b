"""A loop logging steps far faster than the default step interval, until it is killed:
`fast_steps.py OUTPUT_DIR`. The stream keeps about one step a second; the journal's step
file gets the rest in batches. The loss falls with every step, so the best is the last."""

from __future__ import annotations

import sys
from pathlib import Path

from trainwire import Run


def main() -> int:
    run = Run(Path(sys.argv[1]), heartbeat_interval_s=1.0)  # the default step interval
    run.start(total_steps=10_000_000, config={"lr": 3e-4}, provenance=False)
    with run.phase("train"):
        for step in range(1, 10_000_001):
            run.step(step, loss=1000.0 / step, learning_rate=3e-4)
    return 0


if __name__ == "__main__":
    sys.exit(main())
