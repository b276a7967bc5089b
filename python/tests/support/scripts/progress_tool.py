"""A command-line tool with `--progress {plain,json}`, writing to standard output every way a
tool can: print, a logging handler made before the run, a raw write to descriptor 1, a child
process, a print after the run. `--without-trainwire` runs the same tool with no trainwire call."""

from __future__ import annotations

import argparse
import logging
import os
import subprocess
import sys

import trainwire

parser = argparse.ArgumentParser(prog="progress_tool")
parser.add_argument("--without-trainwire", action="store_true")
trainwire.progress_arguments(parser)
args = parser.parse_args()

logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="log: %(message)s")
print("tool: starting")
if args.without_trainwire:
    run = None
else:
    run = trainwire.run_from_arguments(args, step_interval_s=0, heartbeat_interval_s=None)
    run.start(total_steps=3, config={"tool": "progress_tool"})
for step in range(1, 4):
    print(f"tool: step {step}")
    logging.info("step %d done", step)
    os.write(1, f"raw: step {step}\n".encode())
    if run is not None:
        run.step(step, loss=1.0 / step)
subprocess.run([sys.executable, "-c", "print('child: hello')"], check=True)
if run is not None:
    run.finish()
print("tool: done")
sys.exit(run.exit_code if run is not None else 0)
