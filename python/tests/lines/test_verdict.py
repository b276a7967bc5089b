"""The verdict of a run (schemas/verdict): its rules, its schema, and the TypeScript
`verdictOf` answering the same for the same summaries."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
from support.paths import ROOT
from support.typescript_side import typescript_lines

from trainwire.contract import canonical
from trainwire.contract.clock import to_timestamp_us
from trainwire.lines.summary import SummaryBuilder
from trainwire.lines.verdict import params_text, verdict_of, verdict_text

SCHEMA = json.loads((ROOT / "schemas" / "bundled" / "verdict-v1.schema.json").read_text())
T0 = "2026-12-07T10:00:00.000000Z"


def line(seq: int, event: str, second: float, **fields: Any) -> dict[str, Any]:
    ts = f"2026-12-07T10:00:{second:09.6f}Z"
    return {"schema_version": 1, "seq": seq, "ts": ts, "run_id": "r1", "event": event, **fields}


def search_summary(*, finished: bool) -> dict[str, Any]:
    """A search whose failed trial reached the lowest loss, killed or finished after it."""
    builder = SummaryBuilder()
    lines = [
        line(1, "run.started", 0, producer={"name": "t", "version": "1"}, total_steps=None, heartbeat_interval_s=1),
        line(2, "trial.started", 1, trial=1, attempt=1, params={"layers": 2.0, "lr": 0.01}),
        line(3, "train.step", 2, step=1, loss=0.5),
        line(4, "trial.ended", 3, trial=1, attempt=1, status="succeeded", duration_s=2, metrics={}, error=None),
        line(5, "trial.started", 4, trial=2, attempt=1, params={"layers": 4, "lr": 0.1}),
        line(6, "train.step", 5, step=2, loss=1e-05),
        line(
            7,
            "trial.ended",
            6,
            trial=2,
            attempt=1,
            status="failed",
            duration_s=2,
            metrics={},
            error=None,
            best={"trial": 1, "metric": "loss", "value": 0.5},
        ),
        line(8, "checkpoint.saved", 7, step=2, path="ckpt/2", reason="periodic"),
    ]
    if finished:
        lines.append(
            line(
                9,
                "run.finished",
                8,
                status="succeeded",
                exit_code=0,
                error=None,
                reason=None,
                step=2,
                checkpoint="ckpt/final",
                duration_s=8.0,
                metrics={},
                artifacts={},
            )
        )
    for each in lines:
        builder.add(each)
    summary = builder.summary()
    assert summary is not None
    return summary


def test_the_best_is_over_succeeded_trials_and_integer_params_are_integers() -> None:
    verdict = verdict_of(search_summary(finished=True), now_us=None)
    assert verdict["best"]["loss"] == {"value": 0.5, "step": 1, "trial": 1, "goal": "min"}  # not failed trial 2's
    assert verdict["params"] == {"layers": 2, "lr": 0.01} and type(verdict["params"]["layers"]) is int
    assert verdict["checkpoint"] == {"path": "ckpt/final", "source": "run.finished"}
    assert params_text({"lr": 0.01, "layers": 2.0}) == params_text({"layers": 2, "lr": 0.01}) == "layers=2, lr=0.01"
    jsonschema.validate(verdict, SCHEMA)


def test_a_dead_runs_duration_stops_at_its_last_line_and_a_clockless_verdict_says_so() -> None:
    summary = search_summary(finished=False)
    later = to_timestamp_us("2026-12-07T11:00:00Z")
    stale = verdict_of(summary, now_us=later)
    assert (stale["status"], stale["ended_by"], stale["duration_s"]) == ("stale", "last_line", 7.0)
    assert verdict_of(summary, now_us=later + 10**9)["duration_s"] == 7.0  # never grows
    assert stale["checkpoint"] == {"path": "ckpt/2", "source": "checkpoint.saved"}
    assert verdict_text(stale).startswith(
        "stale: step 2, 7.0s, best loss 0.5 (trial 1), checkpoint ckpt/2 (last saved)"
    )
    clockless = verdict_of(summary, now_us=None)
    assert (clockless["status"], clockless["judged_at"]) == ("running", None)
    assert verdict_text(clockless).startswith("running (as of its last line):")
    gone = verdict_of(summary, now_us=None, liveness="gone")  # its host proved it dead: no clock needed
    assert (gone["status"], gone["liveness"]) == ("stale", "gone")
    for verdict in (stale, clockless, gone):
        jsonschema.validate(verdict, SCHEMA)


def test_python_and_typescript_give_the_same_verdict_and_text() -> None:
    finished, running = search_summary(finished=True), search_summary(finished=False)
    lossy = {
        **finished,
        "completeness": {
            "stream_lines": 6,
            "stream_lines_lost": 6,
            "steps_logged": 2,
            "kept_steps_lost": 0,
            "reason": "disk full",
        },
    }
    cases = [
        (finished, None, None, "unknown"),
        (running, "2026-12-07T10:00:09.000000Z", None, "unknown"),  # silent 2 s: running
        (running, "2026-12-07T10:00:09.000000Z", 1.5, "unknown"),  # silent past the limit: stale
        (running, None, None, "unknown"),
        (running, None, None, "gone"),
        (running, "2026-12-07T10:00:08.000000Z", None, "alive"),
        (lossy, "2026-12-07T10:00:09.000000Z", None, "unknown"),
    ]
    request = [{"summary": s, "now": now, "stale_after_s": after, "liveness": live} for s, now, after, live in cases]
    for (summary, now, after, live), answer in zip(cases, typescript_lines("verdicts.js", request), strict=True):
        verdict = verdict_of(
            summary, now_us=None if now is None else to_timestamp_us(now), stale_after_s=after, liveness=live
        )
        expected = {"verdict": verdict, "text": verdict_text(verdict, summary["total_steps"])}
        assert answer == canonical.dumps(expected)
    assert "succeeded, stream incomplete: 6 of 6 lines lost" in verdict_text(verdict_of(lossy, now_us=None))
