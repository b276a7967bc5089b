"""A Lightning tool with `--progress {plain,json}` that writes to standard output the ways a
Lightning script does: its progress bar, its info logging, a logging handler, prints."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

import trainwire
from trainwire.integrations.lightning import TrainwireCallback

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "examples"))
from lightning_train import TinyRegression, loader, trainer_for  # noqa: E402

parser = argparse.ArgumentParser(prog="lightning_progress_tool")
parser.add_argument("output_dir")
trainwire.progress_arguments(parser)
args = parser.parse_args()
logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="log: %(message)s")
print("tool: starting")
with trainwire.run_from_arguments(args, step_interval_s=0, heartbeat_interval_s=None) as run:
    callback = TrainwireCallback(run)
    trainer = trainer_for(args.output_dir, 6, callback, enable_progress_bar=True, enable_model_summary=True)
    trainer.fit(TinyRegression(), loader(), loader(16, seed=1))
    logging.info("fit returned")
print("tool: done")
