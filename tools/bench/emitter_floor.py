"""The least a CPython emitter can cost per `train.step`: one function doing only what every
line needs (the lock, the step arithmetic, the line dict, `ts`, the encode, one `os.write`,
a batch append for the summary), with no argument checks and no sinks. Timed in the same
rounds as the emitter, it bounds from below what `Run.step()` can reach.
"""

from __future__ import annotations

import gc
import os
import threading
import time
from pathlib import Path
from typing import Any

__all__ = ["time_floor"]

_BATCH = 512


def time_floor(path: Path, values: list[tuple[float, float]]) -> float:
    """Seconds per event of the one-function emitter writing `values` as train.step lines to `path`."""
    from pydantic_core import to_json

    from trainwire.contract.clock import format_ts

    lock = threading.Lock()
    envelope: dict[str, Any] = {"schema_version": 1, "event": "train.step", "run_id": "floor"}
    total = len(values)
    pending: list[dict[str, Any]] = []
    clock, monotonic = time.time, time.monotonic
    state = {"seq": 0, "start": None}
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def step(step: int, loss: float, learning_rate: float) -> None:
        with lock:
            now = monotonic()
            start = state["start"]
            if start is None:
                start = state["start"] = now
            elapsed = int((now - start) * 1_000_000 + 0.5) / 1_000_000
            line = envelope.copy()
            line["seq"] = state["seq"] = state["seq"] + 1
            line["ts"] = format_ts(clock())
            line["step"] = step
            line["total_steps"] = total
            line["epoch"] = None
            line["loss"] = loss
            line["learning_rate"] = learning_rate
            line["elapsed_s"] = elapsed
            line["eta_s"] = int(elapsed * (total - step) / step * 1_000_000 + 0.5) / 1_000_000
            line["progress"] = step / total
            os.write(descriptor, to_json(line, inf_nan_mode="null") + b"\n")
            pending.append(line)
            if len(pending) >= _BATCH:
                pending.clear()

    try:
        gc.collect()
        started = time.perf_counter()
        for number, (loss, learning_rate) in enumerate(values, start=1):
            step(number, loss, learning_rate)
        return (time.perf_counter() - started) / total
    finally:
        os.close(descriptor)
