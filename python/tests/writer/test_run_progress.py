"""Progress beyond steps in the writer (contract 1.1): `phase.progress` counted by
`advance()`, cycles of a repeated phase, memory on steps, rollbacks, stops for a criterion
and a host's own exit code."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.strict_streams import file_run, of, strict_lines

from trainwire.writer.checks import RejectedInput


def counted_phase(
    output_dir: Path, name: str, *, interval_s: float, counts: int, every_s: float, n: int = 1, **plan: Any
) -> list[dict[str, Any]]:
    """The lines of a run with one phase `name` (its `plan`) counting `n` items `counts`
    times, one count every `every_s` seconds."""
    run, clock, path = file_run(output_dir, step_interval_s=interval_s)
    run.start(provenance=False)
    with run.phase(name, **plan):
        for _ in range(counts):
            clock.advance(every_s)
            run.advance(n)
    run.finish()
    return strict_lines(path)


def test_an_evaluation_of_5000_items_is_throttled_like_steps_with_its_first_and_last_count_written(
    tmp_path: Path,
) -> None:
    events = counted_phase(tmp_path, "evaluate", interval_s=1.0, counts=5000, every_s=0.001, total=5000, unit="items")

    progress = of(events, "phase.progress")
    assert progress[0]["done"] == 1 and progress[-1]["done"] == 5000
    assert 5 <= len(progress) <= 7  # about one a second over 5 s
    assert all(
        event["phase"] == "evaluate" and event["total"] == 5000 and event["unit"] == "items" for event in progress
    )
    middle = progress[2]
    assert middle["eta_s"] == pytest.approx(0.001 * (5000 - middle["done"]), abs=1e-6)
    assert progress[-1]["eta_s"] == 0.0
    names = [event["event"] for event in events]
    assert names.index("phase.ended") == names.index("phase.progress") + len(progress)  # the counts come before the end


def test_the_last_count_before_the_phase_ends_is_written_even_without_a_plan(tmp_path: Path) -> None:
    events = counted_phase(tmp_path, "data_prepare", interval_s=1.0, counts=30, every_s=0.01, n=10, unit="files")
    progress = of(events, "phase.progress")
    assert [event["done"] for event in progress] == [10, 300]
    assert all(event["total"] is None and event["eta_s"] is None for event in progress)


def test_a_count_past_the_plan_is_accepted_with_an_eta_of_0(tmp_path: Path) -> None:
    events = counted_phase(tmp_path, "benchmark", interval_s=0, counts=5, every_s=1.0, total=3, unit="tasks")
    progress = of(events, "phase.progress")
    assert [event["done"] for event in progress] == [1, 2, 3, 4, 5]
    assert [event["eta_s"] for event in progress] == [2.0, 1.0, 0.0, 0.0, 0.0]


def test_advance_counts_in_the_innermost_open_phase_of_its_thread_and_needs_one(tmp_path: Path) -> None:
    run, clock, path = file_run(tmp_path, step_interval_s=0)
    run.start(provenance=False)
    with pytest.raises(RejectedInput, match="outside an open phase"):
        run.advance()
    with run.phase("benchmark", total=2):
        with run.phase("judge", total=4):
            run.advance(4)
        run.advance()
    with pytest.raises(RejectedInput, match="not an integer"), run.phase("save"):
        run.advance(-1)
    run.finish()
    progress = of(strict_lines(path), "phase.progress")
    assert [(event["phase"], event["done"], event["total"]) for event in progress] == [
        ("judge", 4, 4),
        ("benchmark", 1, 2),
    ]


def test_a_repeated_phase_says_which_cycle_of_how_many_on_its_start_and_end(tmp_path: Path) -> None:
    run, clock, path = file_run(tmp_path)
    run.start(provenance=False)
    for cycle in range(1, 3):
        with run.phase("search", cycle=cycle, total_cycles=5):
            clock.advance(1.0)
    run.phase_started("judge", cycle=1, total_cycles=None)
    run.phase_ended("judge")
    run.finish()
    events = strict_lines(path)
    phases = [
        (event["event"], event["phase"], event.get("cycle"), event.get("total_cycles", "absent"))
        for event in events
        if event["event"].startswith("phase.")
    ]
    assert phases == [
        ("phase.started", "search", 1, 5),
        ("phase.ended", "search", 1, 5),
        ("phase.started", "search", 2, 5),
        ("phase.ended", "search", 2, 5),
        ("phase.started", "judge", 1, None),
        ("phase.ended", "judge", 1, None),
    ]


def test_a_step_carries_the_memory_of_each_local_device(tmp_path: Path) -> None:
    run, clock, path = file_run(tmp_path, step_interval_s=0)
    run.start(provenance=False)
    gpus = {
        f"cuda:{index}": {"allocated_bytes": 2**30, "reserved_bytes": 2**31, "peak_bytes": 3 * 2**30}
        for index in range(2)
    }
    run.step(1, memory=gpus)
    run.step(2, memory={"cpu": {"peak_bytes": 512 * 2**20}})
    run.step(3)
    with pytest.raises(RejectedInput, match="not a byte count"):
        run.step(4, memory={"cuda:0": {"allocated_bytes": -1}})
    run.finish()
    steps = of(strict_lines(path), "train.step")
    assert steps[0]["memory"] == gpus
    assert steps[1]["memory"] == {"cpu": {"allocated_bytes": None, "reserved_bytes": None, "peak_bytes": 512 * 2**20}}
    assert "memory" not in steps[2] and len(steps) == 3


def test_after_a_rollback_steps_go_back_in_the_same_attempt_and_the_eta_takes_the_new_pace(tmp_path: Path) -> None:
    run, clock, path = file_run(tmp_path, step_interval_s=100.0)
    run.start(total_steps=10, provenance=False)
    for step in range(1, 7):
        clock.advance(1.0)
        run.step(step)
    run.rolled_back(6, 3, checkpoint=tmp_path / "checkpoint-3", reason="loss diverged")
    for step in range(4, 11):
        clock.advance(2.0)
        run.step(step)
    run.finish()
    events = strict_lines(path)

    (rollback,) = of(events, "train.rolled_back")
    assert rollback == {
        **rollback,
        "previous_step": 6,
        "step": 3,
        "checkpoint": "checkpoint-3",
        "reason": "loss diverged",
    }
    assert of(events, "train.restarted") == []
    steps = of(events, "train.step")
    assert [event["step"] for event in steps] == [1, 6, 4, 10]  # the first step after the rollback is written at once
    after = steps[2]
    assert after["elapsed_s"] == 7.0 and after["eta_s"] is None  # elapsed goes on; the pace starts over
    assert steps[3]["elapsed_s"] == 19.0 and steps[3]["eta_s"] == 0.0
    names = [event["event"] for event in events]
    assert names.index("train.rolled_back") == names.index("train.step") + 2  # step 6 before the rollback


def test_a_stop_for_a_criterion_ends_the_run_interrupted_with_the_criterion_written(tmp_path: Path) -> None:
    run, clock, path = file_run(tmp_path)
    with run:
        run.start(provenance=False)
        for step in range(1, 600):
            run.step(step, loss=float(step) / 40)
            if step > 400 and step / 40 > 10:
                run.stop_for("loss > 10 after step 400")
                break
    events = strict_lines(path)
    (stop,) = of(events, "stop.requested")
    assert (stop["source"], stop["signal"], stop["criterion"]) == ("api", None, "loss > 10 after step 400")
    (finished,) = of(events, "run.finished")
    assert (finished["status"], finished["reason"], finished["exit_code"], finished["step"]) == (
        "interrupted",
        "api",
        2,
        401,
    )
    assert run.status == "interrupted" and run.exit_code == 2


@pytest.mark.parametrize(
    ("status", "given", "written"),
    [("failed", 6, 6), ("succeeded", 0, 0), ("succeeded", None, 0), ("reverted", None, 3)],
)
def test_finish_writes_a_hosts_own_exit_code(tmp_path: Path, status: str, given: int | None, written: int) -> None:
    run, clock, path = file_run(tmp_path)
    run.start(provenance=False)
    run.finish(status, exit_code=given)
    (finished,) = of(strict_lines(path), "run.finished")
    assert (finished["status"], finished["exit_code"]) == (status, written)
    assert run.exit_code == written


def test_an_exit_code_that_is_not_an_integer_is_refused_when_strict(tmp_path: Path) -> None:
    run, clock, path = file_run(tmp_path)
    run.start(provenance=False)
    with pytest.raises(RejectedInput, match="exit_code"):
        run.finish("failed", exit_code=1.5)  # type: ignore[arg-type]
