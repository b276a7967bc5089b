"""`auto_find_batch_size`: transformers' real retry path after out-of-memory errors."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from trainwire.cli.demo_model import build_model, build_trainer
from trainwire.contract.models import EVENT_ADAPTER
from trainwire.integrations.transformers import attach


def oom_above(batch_size: int, *, after_forwards: int):
    """The tiny model, raising a CUDA-style OOM for batches larger than `batch_size`.

    The error comes on the n-th forward of each too-large size, so every failed attempt
    makes some steps first (the counter really goes back).
    """
    model = build_model()
    original = model.forward
    forwards: dict[int, int] = {}

    @functools.wraps(original)
    def forward(*args: Any, **kwargs: Any) -> Any:
        size = kwargs["input_ids"].shape[0]
        forwards[size] = forwards.get(size, 0) + 1
        if size > batch_size and forwards[size] >= after_forwards:
            # Exactly one argument containing " out of memory.": what accelerate retries on.
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return original(*args, **kwargs)

    model.forward = forward  # type: ignore[method-assign]
    return model


def test_each_oom_retry_is_announced_before_the_steps_go_back(tmp_path: Path) -> None:
    trainer = build_trainer(
        tmp_path,
        model=oom_above(10, after_forwards=3),
        auto_find_batch_size=True,
        per_device_train_batch_size=16,
        max_steps=-1,
        num_train_epochs=1,
    )
    attach(trainer, step_interval_s=0)
    trainer.train()
    lines = (tmp_path / "progress.jsonl").read_text(encoding="utf-8").splitlines()
    for line in lines:
        EVENT_ADAPTER.validate_json(line, strict=True)
    stream = [json.loads(line) for line in lines]

    assert [line["seq"] for line in stream] == list(range(1, len(stream) + 1))
    assert stream[0]["event"] == "run.started" and stream[0]["total_steps"] == 8  # 128 / 16
    restarts = [line for line in stream if line["event"] == "train.restarted"]
    # accelerate shrinks the batch by 0.9 each time: 16 -> 14 -> 12 -> 10; 128 examples per epoch
    assert [
        (
            r["reason"],
            r["attempt"],
            r["previous_step"],
            r["step"],
            r["batch_size_from"],
            r["batch_size_to"],
            r["total_steps"],
        )
        for r in restarts
    ] == [
        ("oom", 2, 2, 0, 16, 14, 10),
        ("oom", 3, 2, 0, 14, 12, 11),
        ("oom", 4, 2, 0, 12, 10, 13),
    ]

    # Per attempt, the steps count from 1 again, and only after the restart line.
    steps_by_attempt: list[list[int]] = [[]]
    for line in stream:
        if line["event"] == "train.restarted":
            steps_by_attempt.append([])
        elif line["event"] == "train.step":
            steps_by_attempt[-1].append(line["step"])
    assert steps_by_attempt == [[1, 2], [1, 2], [1, 2], list(range(1, 14))]

    # One train phase around all attempts; the run succeeds once.
    assert [line["event"] for line in stream].count("phase.started") == 1
    assert [line["event"] for line in stream].count("run.finished") == 1
    assert stream[-1]["status"] == "succeeded" and stream[-1]["step"] == 13
    final_steps = [line for line in stream if line["event"] == "train.step"][-13:]
    assert all(line["total_steps"] == 13 for line in final_steps)
    assert final_steps[0]["eta_s"] is None  # the ETA starts over with the new attempt
