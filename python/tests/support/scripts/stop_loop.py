"""A training-like loop without torch: `stop_loop.py OUTPUT_DIR [--linger]`.

Prints `ready` once the signal handlers are in place and `signalled` once a stop was
honoured; with `--linger` it then spends up to 30 s "saving" (a second signal must kill
it the hard way), else it ends the run interrupted and exits with the run's code.
"""

from __future__ import annotations

import sys
import time

from trainwire.stop import StopControl
from trainwire.writer.run import Run


def main(output_dir: str, linger: bool) -> int:
    run = Run(output_dir, step_interval_s=0)
    run.start(total_steps=None, provenance=False)
    control = StopControl(output_dir, run=run, check_interval_s=0.05).install_signal_handlers()
    print("ready", flush=True)
    step = 0
    while (found := control.check()) is None:
        step += 1
        run.step(step, total_steps=None, loss=1.0 / step)
        time.sleep(0.01)
    print("signalled", flush=True)
    deadline = time.monotonic() + (30 if linger else 0)
    while time.monotonic() < deadline:
        time.sleep(0.01)
    run.finish("interrupted", reason=found.finish_reason)
    return run.exit_code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], "--linger" in sys.argv[2:]))
