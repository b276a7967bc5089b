"""`train_stdout.py OUTPUT_DIR`: a default `Trainer` whose trainwire stream goes to stdout.

The trainer keeps its usual printing (progress bar, log dicts); with the stream on stdout
that printing must land on stderr.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # python/tests: the tests' support package

from support.trainer_streams import plain_trainer  # noqa: E402

from trainwire.integrations.transformers import attach  # noqa: E402


def main(output_dir: str) -> int:
    trainer = plain_trainer(output_dir, max_steps=10, logging_steps=1, save_strategy="no")
    attach(trainer, stdout=True, step_interval_s=0)
    trainer.train()
    trainer.evaluate()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
