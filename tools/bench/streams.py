"""Valid trainwire streams of any size, generated fast.

One run's lines (a block) are built once; a large stream repeats the block with a new
`run_id` per copy, so `seq` stays gap-free within every run and each copy is a complete
run, the way a file that collected many resumed or repeated runs looks.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

__all__ = ["RUN_ID_WIDTH", "line_offset_before", "stream_block", "write_one_run", "write_stream"]

_PLACEHOLDER = "bench-########"
RUN_ID_WIDTH = len(_PLACEHOLDER)
_START = datetime(2026, 11, 29, 10, 0, 0, tzinfo=timezone.utc)
_EVAL_EVERY = 500
_EPOCH_STEPS = 1000


def _ts(seconds: float) -> str:
    return (_START + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _train_step(step: int, total: int, elapsed: float) -> dict[str, Any]:
    return {
        "event": "train.step",
        "step": step,
        "total_steps": total,
        "epoch": round(step / _EPOCH_STEPS, 4),
        "loss": round(2.5 / (1 + step / 300) + 0.01 * (step % 7), 6),
        "learning_rate": round(5e-5 * (1 - step / total), 10),
        "grad_norm": round(1.0 + 0.1 * (step % 5), 4),
        "elapsed_s": round(elapsed, 6),
        "eta_s": round(elapsed * (total - step) / step, 6),
        "progress": round(step / total, 6),
        "tokens_per_s": 5321.5,
    }


def _payloads(total_steps: int) -> Iterator[dict[str, Any]]:
    """One run, in the order a transformers training writes it."""
    yield {
        "event": "run.started",
        "producer": {"name": "trainwire-bench", "version": "0"},
        "total_steps": total_steps,
        "config": {"model": "gpt2-tiny", "learning_rate": 5e-5, "per_device_train_batch_size": 8},
        "heartbeat_interval_s": 30.0,
    }
    yield {"event": "phase.started", "phase": "train"}
    for step in range(1, total_steps + 1):
        elapsed = step * 0.25
        yield _train_step(step, total_steps, elapsed)
        if step % _EVAL_EVERY == 0:
            epoch = round(step / _EPOCH_STEPS, 4)
            yield (
                {
                    "event": "eval.completed",
                    "step": step,
                    "epoch": epoch,
                    "split": "eval",
                    "metrics": {"eval_loss": 1.25, "eval_accuracy": 0.5},
                }
            )
            yield ({"event": "checkpoint.saved", "step": step, "path": f"checkpoint-{step}", "reason": "periodic"})
        if step % _EPOCH_STEPS == 0:
            yield ({"event": "train.epoch", "epoch": step // _EPOCH_STEPS, "step": step, "metrics": {"loss": 0.9}})
    duration = total_steps * 0.25 + 1
    yield {"event": "phase.ended", "phase": "train", "status": "ok", "duration_s": duration}
    yield (
        {
            "event": "run.finished",
            "status": "succeeded",
            "exit_code": 0,
            "error": None,
            "reason": None,
            "step": total_steps,
            "checkpoint": None,
            "duration_s": duration,
            "metrics": {"train_loss": 0.9},
            "artifacts": {},
        }
    )


def _line(seq: int, payload: dict[str, Any]) -> bytes:
    envelope = {"schema_version": 1, "seq": seq, "ts": _ts(seq * 0.25), "run_id": _PLACEHOLDER}
    return (json.dumps(envelope | payload, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def _steps_for(approx_bytes: int) -> int:
    return max(2, approx_bytes // len(_line(1, _train_step(1, 10_000, 0.25))))


def stream_block(approx_bytes: int) -> bytes:
    """One complete run of about `approx_bytes` bytes, its run id a placeholder."""
    return b"".join(_line(seq, payload) for seq, payload in enumerate(_payloads(_steps_for(approx_bytes)), start=1))


def write_one_run(path: Path, total_bytes: int, run_id: str = "bench-00000001", *, append: bool = False) -> int:
    """Write one complete run of about `total_bytes` to `path` (one long training, not many
    runs), or append it (a resume in the same directory): the lines are made as they are
    written, so a 1 GB run takes no more memory than a small one. Returns the file's size."""
    placeholder, own = _PLACEHOLDER.encode(), run_id.encode()
    with open(path, "ab" if append else "wb") as out:
        batch: list[bytes] = []
        for seq, payload in enumerate(_payloads(_steps_for(total_bytes)), start=1):
            batch.append(_line(seq, payload).replace(placeholder, own))
            if len(batch) == 10_000:
                out.writelines(batch)
                batch.clear()
        out.writelines(batch)
    return os.path.getsize(path)


def write_stream(path: Path, total_bytes: int, *, block_bytes: int = 4_000_000) -> int:
    """Write about `total_bytes` of complete runs to `path`; returns the size written."""
    block = stream_block(min(block_bytes, total_bytes))
    copies = max(1, round(total_bytes / len(block)))
    placeholder = _PLACEHOLDER.encode()
    with open(path, "wb") as out:
        for copy in range(1, copies + 1):
            out.write(block.replace(placeholder, f"bench-{copy:08d}".encode()))
    return os.path.getsize(path)


def line_offset_before(path: Path, position: int) -> int:
    """The offset just after the last `\\n` before `position`: where a re-attach can resume."""
    window = 1 << 20
    with open(path, "rb") as stream:
        start = max(0, position - window)
        stream.seek(start)
        data = stream.read(position - start)
    cut = data.rfind(b"\n")
    if cut < 0:
        raise ValueError(f"no complete line in the {window} bytes before offset {position} of {path}")
    return start + cut + 1
