"""trainwire.reader.invariants: what `trainwire validate` holds a writer's stream to."""

from __future__ import annotations

import json
from typing import Any

from trainwire.conformance.paths import cases_dir
from trainwire.reader.invariants import Violation, check_stream


def event(seq: int, name: str, run_id: str = "r1", second: int = 0, **payload: Any) -> bytes:
    envelope = {
        "schema_version": 1,
        "seq": seq,
        "ts": f"2026-11-29T10:00:{second:02d}.000000Z",
        "run_id": run_id,
        "event": name,
    }
    return json.dumps({**envelope, **payload}).encode() + b"\n"


def started(seq: int = 1, run_id: str = "r1", second: int = 0) -> bytes:
    return event(seq, "run.started", run_id, second, producer={"name": "t", "version": "1"}, total_steps=None)


def heartbeat(seq: int, run_id: str = "r1", second: int = 0) -> bytes:
    return event(seq, "run.heartbeat", run_id, second)


def finished(seq: int, run_id: str = "r1", second: int = 0) -> bytes:
    return event(
        seq,
        "run.finished",
        run_id,
        second,
        status="succeeded",
        exit_code=0,
        error=None,
        reason=None,
        step=None,
        checkpoint=None,
        duration_s=1.0,
        metrics={},
        artifacts={},
    )


def rules(violations: list[Violation]) -> list[tuple[int, str | None, str]]:
    return [(v.line, v.run_id, v.rule) for v in violations]


def test_a_clean_stream_with_two_runs_and_an_unknown_event_has_no_violation() -> None:
    data = (
        started() + started(run_id="r2") + event(2, "x.custom") + heartbeat(2, "r2") + finished(3) + finished(3, "r2")
    )
    assert check_stream(data) == []


def test_every_conformance_golden_that_follows_the_writer_rules_is_clean() -> None:
    cases = cases_dir()
    clean = ["full-run", "minimal-run", "oom-restart", "hyperparameter-search", "stop-sigterm"]
    for case in clean:
        assert check_stream((cases / case / "stream.ndjson").read_bytes()) == [], case


def test_seq_gaps_repeats_and_a_wrong_first_seq() -> None:
    data = started(2) + heartbeat(3) + heartbeat(5) + heartbeat(5) + finished(6)
    assert rules(check_stream(data)) == [(1, "r1", "seq_gap"), (3, "r1", "seq_gap"), (4, "r1", "seq_not_increasing")]


def test_run_started_must_come_first_and_only_once() -> None:
    data = heartbeat(1) + started(2) + finished(3)
    assert rules(check_stream(data)) == [(1, "r1", "started_first"), (2, "r1", "started_first")]


def test_exactly_one_run_finished_as_the_last_line_of_its_run() -> None:
    data = started() + finished(2) + heartbeat(3) + finished(4) + started(run_id="r2")
    assert rules(check_stream(data)) == [
        (3, "r1", "after_finished"),
        (4, "r1", "after_finished"),
        (5, "r2", "not_finished"),
    ]
    message = check_stream(data)[1].message
    assert "second run.finished" in message and "line 2" in message


def test_ts_must_not_go_backwards_within_a_run() -> None:
    data = started(second=5) + heartbeat(2, second=4) + heartbeat(1, "r2", second=1) + finished(3, second=6)
    violations = check_stream(data)
    assert rules(violations)[0] == (2, "r1", "ts_backwards")
    assert "10:00:04" in violations[0].message and "10:00:05" in violations[0].message


def test_bad_lines_and_a_torn_last_line_are_violations() -> None:
    data = started() + b"{not json}\n" + b'{"schema_version":2}\n' + finished(2) + b'{"torn'
    violations = check_stream(data)
    assert rules(violations) == [
        (2, None, "invalid_json"),
        (3, None, "unsupported_version"),
        (5, None, "unterminated_line"),
    ]
    assert str(violations[0]).startswith("line 2: invalid_json: ")
    assert violations[2].to_dict()["rule"] == "unterminated_line"


def warnings(violations: list[Violation]) -> list[tuple[int, str, str | None]]:
    return [(v.line, v.rule, v.field) for v in violations if v.severity == "warning"]


def step(seq: int, number: int) -> bytes:
    return event(
        seq,
        "train.step",
        step=number,
        total_steps=10,
        epoch=None,
        loss=1.0,
        learning_rate=None,
        elapsed_s=0.0,
        eta_s=None,
        progress=None,
    )


def test_a_step_going_back_is_a_warning_unless_train_restarted_came_first() -> None:
    restarted = event(5, "train.restarted", attempt=2, reason="oom", previous_step=4, step=2)
    data = started() + step(2, 4) + step(3, 3) + step(4, 4) + restarted + step(6, 2) + finished(7)
    violations = check_stream(data)
    assert warnings(violations) == [(3, "step_backwards", "step")]
    assert "step 3 after step 4" in violations[0].message and violations[0].run_id == "r1"


def test_undeclared_fields_of_known_events_are_warnings_and_x_fields_are_not() -> None:
    data = (
        started()
        + event(2, "run.heartbeat", x_mine=1, phaze="train")
        + finished(
            3,
        ).replace(b'"exit_code"', b'"error_code":1,"exit_code"')
    )
    data += started(run_id="r2").replace(b'"version": "1"', b'"version": "1", "url": "u"') + finished(2, "r2")
    assert warnings(check_stream(data)) == [
        (2, "unknown_field", "phaze"),
        (3, "unknown_field", "error_code"),
        (4, "unknown_field", "producer.url"),
    ]


def test_an_event_name_one_typo_from_a_known_one_is_a_warning() -> None:
    data = started() + event(2, "train.stpe") + event(3, "run.hearbeat") + event(4, "model.exported") + finished(5)
    violations = check_stream(data)
    assert warnings(violations) == [(2, "event_name_near_miss", "event"), (3, "event_name_near_miss", "event")]
    assert "'train.step'" in violations[0].message


def test_a_ts_without_six_fraction_digits_is_a_warning() -> None:
    data = (
        started() + heartbeat(2).replace(b".000000Z", b"Z") + heartbeat(3).replace(b".000000Z", b".000Z") + finished(4)
    )
    assert warnings(check_stream(data)) == [(2, "ts_fraction_digits", "ts"), (3, "ts_fraction_digits", "ts")]


def test_every_rule_has_one_severity_and_meaning() -> None:
    from trainwire._generated.contract import VALIDATE_RULES, WARNING_RULES

    data = heartbeat(1) + started(2) + heartbeat(2) + heartbeat(5) + b'{"torn'
    rules_seen = {v.rule for v in check_stream(data)}
    assert rules_seen <= set(VALIDATE_RULES) and {"started_first", "not_finished", "unterminated_line"} <= rules_seen
    assert WARNING_RULES and set(VALIDATE_RULES) > WARNING_RULES


def trial_step(seq: int, number: int, trial: int) -> bytes:
    return step(seq, number).replace(b'"step":', f'"trial": {trial}, "step":'.encode(), 1)


def test_steps_are_judged_per_trial_and_attempt() -> None:
    # trial 2 starts again at step 1, and so does a new attempt of trial 1: no warning
    data = (
        started()
        + event(2, "trial.started", trial=1, attempt=1, params={})
        + trial_step(3, 1, 1)
        + trial_step(4, 3, 1)
        + event(5, "trial.started", trial=2, attempt=1, params={})
        + trial_step(6, 1, 2)
        + trial_step(7, 2, 2)
        + event(8, "trial.started", trial=1, attempt=2, params={})
        + trial_step(9, 1, 1)
        + trial_step(10, 3, 2)
    )
    assert warnings(check_stream(data + finished(11))) == []
    # within one trial and attempt, a step back is still a warning, naming the trial
    violations = check_stream(data + trial_step(11, 2, 2) + finished(12))
    assert warnings(violations) == [(11, "step_backwards", "step")]
    assert "step 2 after step 3 in trial 2" in violations[0].message


def test_a_rollback_lets_steps_go_back_and_a_rollback_forward_is_a_warning() -> None:
    back = event(4, "train.rolled_back", previous_step=6, step=4, checkpoint="ckpt/4", reason="diverged")
    assert warnings(check_stream(started() + step(2, 5) + step(3, 6) + back + step(5, 5) + finished(6))) == []
    forward = event(4, "train.rolled_back", previous_step=6, step=8, checkpoint=None, reason=None)
    assert warnings(check_stream(started() + step(2, 5) + step(3, 6) + forward + step(5, 9) + finished(6))) == [
        (4, "rollback_forward", "step")
    ]


def test_a_second_trial_ended_for_one_attempt_is_a_warning() -> None:
    def ended(seq: int, attempt: int) -> bytes:
        return event(
            seq, "trial.ended", trial=1, attempt=attempt, status="succeeded", duration_s=1.0, metrics={}, error=None
        )

    data = started() + event(2, "trial.started", trial=1, attempt=1, params={}) + ended(3, 1) + ended(4, 1)
    data += event(5, "trial.started", trial=1, attempt=2, params={}) + ended(6, 2) + finished(7)
    violations = check_stream(data)
    assert warnings(violations) == [(4, "trial_ended_twice", "trial")]
    assert violations[0].severity == "warning"
