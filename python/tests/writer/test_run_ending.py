"""What a run's end closes: every phase and trial it opened and did not end gets its
`phase.ended` or `trial.ended` before `run.finished` (writer rules 11 and 14), on a real file."""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path
from typing import Any

import pytest
from support.strict_streams import file_run, of, strict_lines


def ended(events: list[dict[str, Any]]) -> list[tuple[str, Any, Any]]:
    """`(event, phase or trial, status)` of every line that ends something, in order."""
    return [
        (event["event"], event.get("phase", event.get("trial")), event["status"])
        for event in events
        if event["event"] in ("phase.ended", "trial.ended", "run.finished")
    ]


@pytest.mark.parametrize(
    ("raised", "run_status", "phase_status"),
    [
        (None, "succeeded", "ok"),
        (RuntimeError("boom"), "failed", "failed"),
        (KeyboardInterrupt(), "interrupted", "interrupted"),
    ],
)
def test_a_phase_left_open_ends_as_the_run_does(
    tmp_path: Path, raised: BaseException | None, run_status: str, phase_status: str
) -> None:
    run, clock, stream = file_run(tmp_path)
    with pytest.raises(type(raised)) if raised is not None else contextlib.nullcontext(), run:
        run.start(total_steps=4)
        run.phase_started("train", cycle=2, total_cycles=3)
        run.phase_started("eval")
        clock.advance(1.5)
        if raised is not None:
            raise raised
    events = strict_lines(stream)
    assert ended(events) == [
        ("phase.ended", "eval", phase_status),
        ("phase.ended", "train", phase_status),
        ("run.finished", None, run_status),
    ]
    train = of(events, "phase.ended")[1]
    assert train["duration_s"] == 1.5 and (train["cycle"], train["total_cycles"]) == (2, 3)


def test_a_trial_left_open_ends_failed_naming_the_run_end(tmp_path: Path) -> None:
    run, clock, stream = file_run(tmp_path)
    with run:
        run.start(total_trials=3)
        with run.trial(1, {"lr": 0.1}), run.phase("train"):  # ended by their blocks: not ended again
            pass
        run.trial_started(2, {"lr": 0.2}, attempt=2)
        clock.advance(2.0)
    events = strict_lines(stream)
    assert ended(events) == [
        ("phase.ended", "train", "ok"),
        ("trial.ended", 1, "succeeded"),
        ("trial.ended", 2, "failed"),
        ("run.finished", None, "succeeded"),
    ]
    left = of(events, "trial.ended")[1]
    assert left["attempt"] == 2 and left["duration_s"] == 2.0
    assert left["error"] == {"type": "TrialNotEnded", "message": "the run ended before the trial ended"}


def test_what_is_open_closes_innermost_first_whichever_thread_opened_it(tmp_path: Path) -> None:
    run, _, stream = file_run(tmp_path)
    run.start(total_trials=1)
    run.phase_started("search")

    def worker() -> None:  # a search's trial on a thread of its own, with a phase inside
        with run.trial_scope(1):
            run.trial_started(1)
            run.phase_started("evaluate", total=10)

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    run.finish("interrupted", reason="sigterm")
    events = strict_lines(stream)
    assert ended(events) == [
        ("phase.ended", "evaluate", "interrupted"),
        ("trial.ended", 1, "failed"),
        ("phase.ended", "search", "interrupted"),
        ("run.finished", None, "interrupted"),
    ]
    assert of(events, "phase.ended")[0]["trial"] == 1  # the trial its opener was in
    assert "trial" not in of(events, "phase.ended")[1]
