"""Child process: a tiny GPT-2 `Trainer` on CPU, timed with and without the trainwire callback,
and the latency of a cooperative stop.

Usage: trainer_child.py STEPS PAIRS STOP_REPEATS SCRATCH_DIR  ->  one JSON object on stdout.
"""

from __future__ import annotations

import json
import logging
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import transformers
from transformers import Trainer, TrainerCallback

from trainwire.cli.demo_model import build_trainer
from trainwire.integrations.transformers import attach
from trainwire.stop import request_stop

# A stop check runs at most once a second; the stop run must outlast that by far before failing.
_STOP_AFTER_STEPS = 10
_STOP_MAX_STEPS = 3000


def _trainer(output_dir: Path, max_steps: int) -> Trainer:
    # logging_steps=1 (the builder's default) is the callback's worst case: a train.step report every step
    return build_trainer(output_dir, max_steps=max_steps, eval_size=0)


def _train_seconds(scratch: Path, steps: int, with_callback: bool) -> tuple[float, float]:
    """Wall and CPU seconds of one run (CPU time is less disturbed by neighbours on a shared machine)."""
    trainer = _trainer(Path(tempfile.mkdtemp(dir=scratch)), steps)
    wall, cpu = time.perf_counter(), time.process_time()
    if with_callback:
        attach(trainer)
    trainer.train()
    return time.perf_counter() - wall, time.process_time() - cpu


class _StopController(TrainerCallback):
    """Times every step; after a few, creates the control file from another thread at a random moment."""

    def __init__(self, output_dir: Path, delay_s: float) -> None:
        self.output_dir = output_dir
        self.delay_s = delay_s
        self.step_ends: list[float] = []
        self.requested_at: float | None = None

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.step_ends.append(time.monotonic())
        if len(self.step_ends) == _STOP_AFTER_STEPS:
            threading.Timer(self.delay_s, self._request).start()

    def _request(self) -> None:
        request_stop(self.output_dir, reason="bench", requested_by="trainer_child")
        self.requested_at = time.monotonic()


def _stop_latency(scratch: Path, delay_s: float) -> dict[str, float]:
    output_dir = Path(tempfile.mkdtemp(dir=scratch))
    trainer = _trainer(output_dir, _STOP_MAX_STEPS)
    callback = attach(trainer)
    controller = _StopController(output_dir, delay_s)
    trainer.add_callback(controller)
    trainer.train()
    exited_at = time.monotonic()
    if not callback.stopped or controller.requested_at is None:
        raise RuntimeError(f"the stop was not honoured within {_STOP_MAX_STEPS} steps")
    ends = controller.step_ends
    step_s = statistics.median(later - earlier for earlier, later in zip(ends, ends[1:], strict=False))
    return {"latency_s": exited_at - controller.requested_at, "step_s": step_s}


def main(steps: int, pairs: int, stop_repeats: int, scratch: Path) -> None:
    transformers.logging.set_verbosity_error()
    logging.getLogger("trainwire").setLevel(logging.ERROR)
    _train_seconds(scratch, steps, True)  # warm-up: first-call costs of torch and the callback
    with_callback: list[tuple[float, float]] = []
    without: list[tuple[float, float]] = []
    for pair in range(pairs):  # interleaved, the order alternating, so drift hits both sides
        order = (True, False) if pair % 2 == 0 else (False, True)
        for flag in order:
            (with_callback if flag else without).append(_train_seconds(scratch, steps, flag))
    rng = random.Random(0)
    stops = [_stop_latency(scratch, rng.uniform(0.0, 1.0)) for _ in range(stop_repeats)]
    json.dump({"with": with_callback, "without": without, "stops": stops}, sys.stdout)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4]))
