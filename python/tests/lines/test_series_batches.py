"""The journal folds a batch of lines into a run's series at once (`RunSeries.add_lines`,
`Series.extend`); it must give what one line at a time gives (`add_line`, `add`), through
restarts, non-finite values, metrics, trials, evaluations and the buckets' compaction."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from trainwire.lines.series import RunSeries, Series

_VALUES = (0.5, 1.0, 0.0, 0.25, None, math.nan, math.inf, -math.inf, 3, True)


@pytest.mark.parametrize("seed", range(40))
def test_a_batch_of_points_gives_what_one_point_at_a_time_gives(seed: int) -> None:
    draw = random.Random(seed)
    max_points = draw.choice([4, 8, 12, 40, 4000])
    one_by_one, batched = Series(max_points), Series(max_points)
    attempt, step = 1, 0
    for _ in range(draw.randint(1, 25)):
        attempt += draw.random() < 0.2  # a new attempt: buckets of two attempts never merge
        points = []
        for _ in range(draw.randint(0, 200)):
            step += 1
            points.append((step, draw.choice(_VALUES) if draw.random() < 0.3 else draw.random(), 1_000 + step))
        for at, value, time_us in points:
            if value is not None and value - value == 0.0:
                one_by_one.add(attempt, at, value, time_us)
        steps, values, times = zip(*points, strict=True) if points else ((), (), ())
        batched.extend(attempt, list(steps), list(values), list(times))
        assert batched.to_dict() == one_by_one.to_dict()


def _line(seq: int, event: str, **fields: Any) -> dict[str, Any]:
    second, micro = divmod(seq * 137_001, 1_000_000)
    minute, second = divmod(second, 60)
    ts = f"2026-12-07T10:{minute % 60:02d}:{second:02d}.{micro:06d}Z"
    return {"schema_version": 1, "seq": seq, "ts": ts, "run_id": "r", "event": event, **fields}


def _lines(draw: random.Random, count: int) -> list[dict[str, Any]]:
    lines, step, attempt = [], 0, 1
    for seq in range(1, count + 1):
        roll = draw.random()
        if roll < 0.02:
            attempt += 1
            step = max(0, step - draw.randint(0, 20))
            lines.append(_line(seq, "train.restarted", attempt=attempt, step=step, reason="oom"))
        elif roll < 0.04:
            lines.append(_line(seq, "eval.completed", step=step, split="validation", metrics={"loss": draw.random()}))
        else:
            step += 1
            fields: dict[str, Any] = {"step": step, "loss": draw.choice(_VALUES[:8]) if roll < 0.1 else draw.random()}
            if draw.random() < 0.5:
                fields["learning_rate"] = 1e-4
            if roll > 0.97:
                fields["metrics"] = {"accuracy": draw.random()}
            if 0.95 < roll <= 0.97:
                fields["trial"] = draw.randint(1, 3)
            lines.append(_line(seq, "train.step", **fields))
    return lines


@pytest.mark.parametrize("seed", range(10))
def test_a_batch_of_lines_gives_what_one_line_at_a_time_gives(seed: int) -> None:
    draw = random.Random(seed)
    lines = _lines(draw, 3000)
    one_by_one, batched = RunSeries("r", 64, 20), RunSeries("r", 64, 20)
    for line in lines:
        one_by_one.add_line(line)
    at = 0
    while at < len(lines):
        size = draw.choice([1, 2, 7, 100, 1000])
        batched.add_lines(lines[at : at + size])
        at += size
    assert batched.to_dict() == one_by_one.to_dict()
    assert batched.names() == one_by_one.names()
