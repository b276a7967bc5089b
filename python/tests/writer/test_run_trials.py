"""Trials in the writer (contract 1.1): `Run.trial()` scopes, the trial stamped on progress
events, explicit `trial=` for a search driver, and step bookkeeping per trial and attempt
(writer rules 5 and 6)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from support.strict_streams import file_run, of, strict_lines

from trainwire.contract.errors import RunInterrupted
from trainwire.writer.checks import RejectedInput

STEPPED = (
    "train.step",
    "train.epoch",
    "eval.completed",
    "checkpoint.saved",
    "train.restarted",
    "phase.started",
    "phase.ended",
)


def attempts(events: list[dict[str, Any]]) -> dict[tuple[int, int], list[int]]:
    """The steps written per (trial, attempt), the attempt counted by `train.restarted`."""
    attempt: dict[int, int] = {}
    steps: dict[tuple[int, int], list[int]] = {}
    for event in events:
        if event["event"] == "train.restarted":
            attempt[event["trial"]] = event["attempt"]
        elif event["event"] == "train.step":
            steps.setdefault((event["trial"], attempt.get(event["trial"], 1)), []).append(event["step"])
    return steps


def test_a_sweep_of_three_trials_with_a_restart_in_trial_2_writes_every_first_step_and_never_steps_back(
    tmp_path: Path,
) -> None:
    run, clock, path = file_run(tmp_path, step_interval_s=1.0)
    run.start(total_steps=10, total_trials=3, provenance=False)
    for number in (1, 2, 3):
        with run.trial(number, params={"lr": 10.0**-number}) as outcome:
            for step in range(1, 11):
                clock.advance(0.4)
                run.step(step, loss=1.0 / step)
                if number == 2 and step == 5:
                    run.restarted("oom", step=0, batch_size_from=8, batch_size_to=4)
                    for again in range(1, 11):
                        clock.advance(0.2)
                        run.step(again, loss=1.0 / again)
                    break
            run.eval(10, {"eval_loss": 0.5})
            run.checkpoint(10, tmp_path / f"trial-{number}")
            outcome.metrics = {"eval_loss": 0.5 / number}
    run.finish()
    events = strict_lines(path)

    assert events[0]["total_trials"] == 3
    assert all(event["trial"] in (1, 2, 3) for event in events if event["event"] in STEPPED)
    steps = attempts(events)
    assert set(steps) == {(1, 1), (2, 1), (2, 2), (3, 1)}
    for key, written in steps.items():
        assert written[0] == 1 and written[-1] == 10 or key == (2, 1), (key, written)
        assert written == sorted(written), (key, written)  # no step goes back within a trial attempt
    assert steps[(2, 1)][0] == 1 and steps[(2, 1)][-1] == 5  # the last step before the restart is written
    # rule 6 per trial attempt: the clock starts at its first step, the ETA from its own pace
    firsts = [event for event in of(events, "train.step") if event["step"] == 1]
    assert len(firsts) == 4 and all(event["elapsed_s"] == 0.0 and event["eta_s"] is None for event in firsts)
    trial_3 = [event for event in of(events, "train.step") if event["trial"] == 3]
    assert trial_3[-1]["elapsed_s"] == pytest.approx(3.6) and trial_3[-1]["eta_s"] == 0.0
    paced = next(event for event in trial_3 if event["step"] not in (1, 10))
    assert paced["eta_s"] == pytest.approx(paced["elapsed_s"] * (10 - paced["step"]) / (paced["step"] - 1))
    (restart,) = of(events, "train.restarted")
    assert (restart["trial"], restart["attempt"], restart["previous_step"]) == (2, 2, 5)
    ended = of(events, "trial.ended")
    assert [(event["trial"], event["status"], event["metrics"]["eval_loss"]) for event in ended] == [
        (1, "succeeded", 0.5),
        (2, "succeeded", 0.25),
        (3, "succeeded", 0.5 / 3),
    ]
    assert ended[0]["duration_s"] == pytest.approx(4.0)
    assert of(events, "run.finished")[0]["step"] == 10


def test_a_search_driver_writes_for_trials_running_elsewhere_with_their_steps_throttled_apart(tmp_path: Path) -> None:
    run, clock, path = file_run(tmp_path, step_interval_s=1.0)
    run.start(total_steps=20, provenance=False)
    run.trial_started(1, {"lr": 0.1})
    run.trial_started(2, {"lr": 0.2})
    for step in range(1, 21):
        clock.advance(0.25)
        run.step(step, trial=1)
        clock.advance(0.25)
        run.step(step, trial=2)
    run.epoch(1, 20, {"loss": 0.3}, trial=2)
    run.trial_ended(1, "succeeded")
    run.trial_ended(2, "pruned", accepted=False)
    run.finish()
    events = strict_lines(path)

    steps = attempts(events)
    assert steps[(1, 1)][0] == steps[(2, 1)][0] == 1 and steps[(1, 1)][-1] == steps[(2, 1)][-1] == 20
    assert all(len(written) < 20 for written in steps.values())  # each trial throttled on its own
    stamps = [event["ts"] for event in events]
    assert stamps == sorted(stamps)  # two trials' pending steps are written in the order reported
    assert of(events, "train.epoch")[0]["trial"] == 2
    assert of(events, "trial.ended")[1]["accepted"] is False


def test_each_thread_stamps_the_trial_of_its_own_scope(tmp_path: Path) -> None:
    run, clock, path = file_run(tmp_path, step_interval_s=0)
    run.start(provenance=False)
    inside = threading.Barrier(2)

    def trial(number: int) -> None:
        with run.trial(number):
            inside.wait(timeout=30)  # both scopes open at once
            for step in range(1, 4):
                run.step(step)
            with run.phase("evaluate"):
                pass
            inside.wait(timeout=30)

    threads = [threading.Thread(target=trial, args=(number,)) for number in (1, 2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    run.step(7)  # outside any scope: no trial
    run.finish()
    events = strict_lines(path)

    for number in (1, 2):
        assert [event["step"] for event in of(events, "train.step") if event.get("trial") == number] == [1, 2, 3]
        assert [
            event["event"] for event in events if event["event"].startswith("phase.") and event["trial"] == number
        ] == ["phase.started", "phase.ended"]
    assert "trial" not in of(events, "train.step")[-1]


def test_the_trial_scope_maps_how_its_block_ends_to_the_trial_status(tmp_path: Path) -> None:
    run, clock, path = file_run(tmp_path)
    run.start(provenance=False)
    with run.trial(1, {"kind": "baseline"}, baseline=True) as outcome:
        outcome.metrics, outcome.accepted = {"score": 0.5}, True
        outcome.best = {"trial": 1, "metric": "score", "value": 0.5}
    with pytest.raises(ValueError, match="diverged"), run.trial(2, {"lr": 1.0}):
        raise ValueError("diverged")
    with run.trial(3, {"lr": 0.5}) as outcome:
        outcome.status = "pruned"
    with pytest.raises(RunInterrupted), run.trial(4, {"lr": 0.1}, attempt=2):
        raise RunInterrupted("api")
    run.finish()
    events = strict_lines(path)

    started = of(events, "trial.started")
    assert started[0]["baseline"] is True and all("baseline" not in event for event in started[1:])
    ended = {event["trial"]: event for event in of(events, "trial.ended")}
    assert ended[1]["status"] == "succeeded" and ended[1]["accepted"] is True and ended[1]["best"]["trial"] == 1
    assert ended[2]["status"] == "failed" and ended[2]["error"] == {"type": "ValueError", "message": "diverged"}
    assert ended[3]["status"] == "pruned" and ended[3]["error"] is None
    assert (ended[4]["status"], ended[4]["attempt"], ended[4]["error"]["type"]) == ("failed", 2, "RunInterrupted")
    assert all("accepted" not in ended[number] for number in (2, 3, 4))


def test_a_new_attempt_of_a_trial_starts_its_step_bookkeeping_afresh(tmp_path: Path) -> None:
    run, clock, path = file_run(tmp_path, step_interval_s=10.0)
    run.start(total_steps=4, provenance=False)
    for attempt in (1, 2):
        with run.trial(1, attempt=attempt):
            for step in range(1, 5):
                clock.advance(1.0)
                run.step(step)
    run.finish()
    events = strict_lines(path)

    steps = of(events, "train.step")
    assert [event["step"] for event in steps] == [1, 4, 1, 4]  # each attempt's first step and its last
    assert [event["elapsed_s"] for event in steps] == [0.0, 3.0, 0.0, 3.0]


def test_an_explicit_trial_that_is_not_a_number_from_1_is_left_out_or_refused_when_strict(tmp_path: Path) -> None:
    strict, clock, _ = file_run(tmp_path / "strict")
    with pytest.raises(RejectedInput, match="trial=0"):
        strict.step(1, trial=0)
    run, clock, path = file_run(tmp_path / "lenient", strict=False)
    run.step(1, trial=0)
    run.eval(1, {"loss": 1.0}, trial="two")
    run.finish()
    events = strict_lines(path)
    assert "trial" not in of(events, "train.step")[0] and "trial" not in of(events, "eval.completed")[0]


@pytest.mark.parametrize("trial", [None, 2])
def test_after_a_restart_the_runs_last_step_is_where_the_new_attempt_starts(tmp_path: Path, trial: int | None) -> None:
    run, clock, path = file_run(tmp_path)
    run.start(provenance=False)
    run.step(7, trial=trial)
    run.restarted("oom", step=3, trial=trial)
    assert run.last_step == 3
    run.finish()
    (finished,) = of(strict_lines(path), "run.finished")
    assert finished["step"] == 3
