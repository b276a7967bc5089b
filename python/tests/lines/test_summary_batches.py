"""The journal folds train.step lines in batches: the same summary as line by line, whatever the lines."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from trainwire.lines.summary import SummaryBuilder

RUN = "run-a"

_odd_numbers = st.one_of(
    st.none(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-5, 5),
    st.booleans(),
    st.just("1.0"),
    st.just(1e308),
)
_plain_numbers = st.floats(min_value=-1e3, max_value=1e3)


@st.composite
def _plain_step(draw: st.DrawFn) -> dict[str, Any]:
    """A train.step line as a training loop writes it."""
    line: dict[str, Any] = {
        "event": "train.step",
        "run_id": RUN,
        "ts": draw(st.sampled_from(["2026-12-01T00:00:00.000001Z", "2026-12-01T00:00:01.5Z"])),
        "step": draw(st.integers(0, 1000)),
        "total_steps": draw(st.one_of(st.none(), st.integers(1, 1000))),
    }
    for name in ("loss", "learning_rate", "grad_norm"):
        if draw(st.integers(0, 5)):
            line[name] = draw(st.one_of(_plain_numbers, st.none()))
    return line


#: one field changed to what a batch must not fold at once
_ODD_FIELDS = {
    "event": st.sampled_from(["eval.completed", "checkpoint.saved", "run.started"]),
    "run_id": st.just("run-b"),
    "ts": st.sampled_from([None, 3]),
    "step": st.sampled_from([None, True, 2.0]),
    "total_steps": st.booleans(),
    "loss": _odd_numbers,
    "learning_rate": _odd_numbers,
    "grad_norm": _odd_numbers,
    "metrics": st.fixed_dictionaries({"accuracy": _odd_numbers, "eval_loss": _plain_numbers}),
}


@st.composite
def _batches(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Plain steps; in about half the batches one line has one odd field."""
    lines = draw(st.lists(_plain_step(), max_size=12))
    if lines and draw(st.booleans()):
        field = draw(st.sampled_from(sorted(_ODD_FIELDS)))
        odd = draw(st.sampled_from(lines))
        odd.update({field: draw(_ODD_FIELDS[field]), "path": "ckpt", "split": "eval"})
    return lines


def _started() -> SummaryBuilder:
    builder = SummaryBuilder()
    builder.add({"event": "run.started", "run_id": RUN, "ts": "2026-12-01T00:00:00Z", "total_steps": 100})
    return builder


def _same(left: Any, right: Any) -> bool:
    """Equal, NaN included (a summary never holds one, but a wrong fold might)."""
    if isinstance(left, float) and isinstance(right, float):
        return (
            left == right
            and math.copysign(1, left) == math.copysign(1, right)
            or (math.isnan(left) and math.isnan(right))
        )
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(_same(left[key], right[key]) for key in left)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(map(_same, left, right))
    return type(left) is type(right) and left == right


@settings(max_examples=500, deadline=None)
@given(st.lists(_batches(), max_size=6))
def test_batches_fold_as_lines_one_by_one(batches: list[list[dict[str, Any]]]) -> None:
    one_by_one, batched = _started(), _started()
    for batch in batches:
        for line in batch:
            one_by_one.add(line)
        batched.add_lines(batch)
    assert _same(batched.summary(), one_by_one.summary())
    assert batched.last_ts == one_by_one.last_ts


def test_a_plain_batch_takes_the_first_lowest_loss_and_the_last_values() -> None:
    builder = _started()
    losses = [3.0, 1.0, 2.0, 1.0, 0.0, -0.0, 0.5]
    builder.add_lines(
        [
            {
                "event": "train.step",
                "run_id": RUN,
                "ts": f"t{step}",
                "step": step,
                "total_steps": None,
                "loss": loss,
                "learning_rate": 1e-4 / step,
            }
            for step, loss in enumerate(losses, start=1)
        ]
    )
    summary = builder.summary()
    assert summary is not None
    assert summary["best"] == {"loss": {"value": 0.0, "step": 5}}
    assert summary["last"] == {"loss": 0.5, "learning_rate": 1e-4 / 7}
    assert (summary["step"], summary["total_steps"], builder.last_ts) == (7, 100, "t7")


def test_a_rollback_takes_the_summary_back_to_its_step_without_a_new_attempt() -> None:
    builder = _started()
    builder.add({"event": "train.step", "run_id": RUN, "ts": "t1", "step": 6, "total_steps": None, "loss": 9.0})
    builder.add(
        {"event": "train.rolled_back", "run_id": RUN, "ts": "t2", "previous_step": 6, "step": 4, "checkpoint": None}
    )
    summary = builder.summary()
    assert summary is not None
    assert (summary["step"], summary["attempts"]) == (4, 1)
