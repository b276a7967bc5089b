"""trainwire.reader.state: the fold of docs/reader-rules.md sections 3-5, and the reader state it gives."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from support.paths import ROOT

from trainwire.conformance.paths import cases_dir
from trainwire.contract import canonical
from trainwire.contract.clock import parse_timestamp_us
from trainwire.contract.errors import StreamError
from trainwire.reader.state import StreamReader, read_state

SCHEMAS = ROOT / "schemas" / "bundled"
STATE_VALIDATOR = jsonschema.Draft202012Validator(json.loads((SCHEMAS / "reader-state-v1.schema.json").read_text()))


def event(seq: int, name: str, run_id: str = "r1", second: int = 0, **payload: Any) -> bytes:
    envelope = {
        "schema_version": 1,
        "seq": seq,
        "ts": f"2026-11-29T10:00:{second:02d}.000000Z",
        "run_id": run_id,
        "event": name,
    }
    return json.dumps({**envelope, **payload}, separators=(",", ":")).encode() + b"\n"


def started(seq: int = 1, run_id: str = "r1", **extra: Any) -> bytes:
    return event(seq, "run.started", run_id, producer={"name": "t", "version": "1"}, total_steps=100, **extra)


def step(seq: int, value: int, run_id: str = "r1", second: int = 0) -> bytes:
    return event(
        seq,
        "train.step",
        run_id,
        second,
        step=value,
        total_steps=100,
        epoch=value / 50,
        loss=2.5 - value / 100,
        learning_rate=1e-4,
        elapsed_s=value / 10,
        eta_s=10.0,
        progress=value / 100,
    )


def finished(seq: int, status: str = "succeeded", run_id: str = "r1", **extra: Any) -> bytes:
    return event(
        seq,
        "run.finished",
        run_id,
        status=status,
        exit_code=0,
        error=None,
        reason=None,
        step=100,
        checkpoint=None,
        duration_s=5.0,
        metrics={"loss": 0.5},
        artifacts={},
        **extra,
    )


FULL_RUN = b"".join(
    [
        started(heartbeat_interval_s=10, stage={"name": "sft", "index": 1, "count": 2, "x_note": "kept"}),
        event(2, "phase.started", phase="train"),
        step(3, 10, second=1),
        event(
            4,
            "train.restarted",
            reason="oom",
            attempt=2,
            previous_step=12,
            step=0,
            batch_size_from=16,
            batch_size_to=8,
            total_steps=200,
        ),
        step(5, 20, second=2),
        event(6, "train.epoch", epoch=1, step=50, metrics={"acc": 0.5}),
        event(7, "eval.completed", step=50, epoch=1.0, split="eval", metrics={"eval_loss": 1.5, "bad": None}),
        event(8, "checkpoint.saved", step=50, path="checkpoint-50", reason="periodic"),
        event(9, "trial.started", trial=2, attempt=1, params={"lr": 0.1}),
        event(
            10,
            "trial.ended",
            trial=2,
            attempt=1,
            status="succeeded",
            duration_s=1.0,
            metrics={},
            error=None,
            best={"trial": 2, "metric": "loss", "value": 0.25, "x_dropped": 1},
        ),
        event(11, "stop.requested", source="control_file", signal=None, reason="enough", requested_by="me"),
        event(12, "phase.ended", phase="train", status="interrupted", duration_s=3.0),
        event(13, "model.exported", x_format="onnx"),
        finished(14, "interrupted", x_extra={"kept": 5.0}),
    ]
)


def test_a_full_run_folds_into_the_documented_state() -> None:
    state = read_state(FULL_RUN)
    (run,) = state["runs"]
    assert run == {
        "run_id": "r1",
        "status": "interrupted",
        "events": 14,
        "last_seq": 14,
        "last_ts": "2026-11-29T10:00:00.000000Z",
        "seq_gaps": [],
        "heartbeat_interval_s": 10,
        "phase": None,
        "step": 50,
        "total_steps": 100,
        "epoch": 1,
        "loss": 2.3,
        "learning_rate": 1e-4,
        "eta_s": 10.0,
        "progress": 0.2,
        "attempt": 2,
        "restarts": [{"reason": "oom", "previous_step": 12, "step": 0}],
        "stop_requested": True,
        "last_eval": {"step": 50, "epoch": 1.0, "split": "eval", "metrics": {"eval_loss": 1.5, "bad": None}},
        "last_checkpoint": {"step": 50, "path": "checkpoint-50", "reason": "periodic"},
        "trials": {
            "count": 2,
            "best": {"trial": 2, "metric": "loss", "value": 0.25, "params": {"lr": 0.1}},
            "total": None,
            "list": [
                {
                    "trial": 2,
                    "attempt": 1,
                    "baseline": False,
                    "status": "succeeded",
                    "params": {"lr": 0.1},
                    "step": None,
                    "epoch": None,
                    "loss": None,
                    "elapsed_s": None,
                    "eta_s": None,
                    "metrics": {},
                    "duration_s": 1.0,
                    "error": None,
                    "accepted": None,
                    "last_eval": None,
                    "previous_eval": None,
                }
            ],
        },
        "phase_progress": None,
        "cycle": None,
        "rollbacks": [],
        "stop_criterion": None,
        "stage": {"name": "sft", "index": 1, "count": 2, "x_note": "kept"},
        "finished": {
            "status": "interrupted",
            "exit_code": 0,
            "error": None,
            "reason": None,
            "step": 100,
            "checkpoint": None,
            "duration_s": 5.0,
            "metrics": {"loss": 0.5},
            "artifacts": {},
            "x_extra": {"kept": 5.0},
        },
    }
    assert state["unknown_events"] == 1 and state["diagnostics"] == []
    assert (state["lines"], state["consumed_bytes"], state["partial_tail_bytes"]) == (14, len(FULL_RUN), 0)
    STATE_VALIDATOR.validate(state)
    assert '"x_extra":{"kept":5}' in canonical.dumps(state)  # 5.0 is written 5, as JavaScript would


def test_a_restart_clears_eta_and_progress_and_takes_the_new_total() -> None:
    (run,) = read_state(
        started()
        + step(2, 10)
        + event(3, "train.restarted", reason="oom", attempt=2, previous_step=10, step=0, total_steps=300)
    )["runs"]
    assert (run["step"], run["eta_s"], run["progress"], run["total_steps"], run["attempt"]) == (0, None, None, 300, 2)


def test_a_phase_ends_only_when_it_is_the_open_one() -> None:
    data = (
        started()
        + event(2, "phase.started", phase="train")
        + event(3, "phase.ended", phase="evaluate", status="ok", duration_s=1)
    )
    assert read_state(data)["runs"][0]["phase"] == "train"


def test_feeding_one_byte_at_a_time_gives_the_same_state_as_the_whole_buffer() -> None:
    data = FULL_RUN + b"junk\n" + step(2, 5, run_id="r2") + step(2, 5, run_id="r2") + b'{"partial":'
    reader = StreamReader()
    for byte in data:
        reader.feed(bytes([byte]))
    reader.finish()
    assert reader.to_json() == canonical.dumps(read_state(data))


def test_seq_gaps_are_applied_repeats_dropped_and_lines_after_finish_dropped() -> None:
    data = started() + step(2, 1) + step(5, 5) + step(5, 6) + step(3, 7) + finished(6) + step(7, 8) + finished(8)
    state = read_state(data)
    (run,) = state["runs"]
    assert run["seq_gaps"] == [[3, 5]] and run["step"] == 5 and run["events"] == 4 and run["last_seq"] == 6
    assert [(d["line"], d["code"]) for d in state["diagnostics"]] == [
        (3, "seq_gap"),
        (4, "seq_not_increasing"),
        (5, "seq_not_increasing"),
        (7, "after_finished"),
        (8, "after_finished"),
    ]
    STATE_VALIDATOR.validate(state)


def test_a_run_whose_first_line_has_a_gap_is_created_with_the_gap() -> None:
    state = read_state(step(4, 1, run_id="late"))
    assert state["runs"][0]["seq_gaps"] == [[1, 4]] and state["diagnostics"][0]["code"] == "seq_gap"


def test_diagnostics_of_the_decoder_and_the_fold_stay_in_stream_order() -> None:
    data = started() + b"bad\n" + step(3, 1) + b'{"schema_version":2}\n' + step(3, 2)
    codes = [(d["line"], d["code"]) for d in read_state(data)["diagnostics"]]
    assert codes == [(2, "invalid_json"), (3, "seq_gap"), (4, "unsupported_version"), (5, "seq_not_increasing")]


def test_skipped_lines_create_no_run() -> None:
    assert read_state(b'{"schema_version":1,"seq":1,"run_id":"ghost"}\n')["runs"] == []


def test_interleaved_runs_are_kept_apart_in_order_of_first_appearance() -> None:
    data = (
        started(run_id="b")
        + started(run_id="a")
        + step(2, 3, run_id="a")
        + step(2, 7, run_id="b")
        + finished(3, "failed", run_id="b")
    )
    state = read_state(data)
    assert [(r["run_id"], r["status"], r["step"]) for r in state["runs"]] == [("b", "failed", 7), ("a", "running", 3)]
    assert state["diagnostics"] == []


def test_staleness_from_heartbeats_or_a_timeout_at_microsecond_precision() -> None:
    data = started(heartbeat_interval_s=10)  # last line at 10:00:00
    assert read_state(data)["runs"][0]["status"] == "running"
    assert read_state(data, now="2026-11-29T10:00:30.000000Z")["runs"][0]["status"] == "running"  # exactly 3 intervals
    assert read_state(data, now="2026-11-29T10:00:30.000001Z")["runs"][0]["status"] == "stale"
    assert read_state(data, now="2026-11-29T11:00:30.000001+01:00")["runs"][0]["status"] == "stale"
    assert (
        read_state(data, now=datetime(2026, 11, 29, 10, 0, 5, tzinfo=timezone.utc), stale_after_s=4.9999994)["runs"][0][
            "status"
        ]
        == "stale"
    )
    assert read_state(data, now="2026-11-29T10:00:05Z", stale_after_s=5)["runs"][0]["status"] == "running"
    no_heartbeat = started()
    assert read_state(no_heartbeat, now="2027-01-01T00:00:00Z")["runs"][0]["status"] == "running"
    assert read_state(started() + finished(2), now="2027-01-01T00:00:00Z")["runs"][0]["status"] == "succeeded"


def test_timestamps_are_parsed_exactly() -> None:
    assert parse_timestamp_us("1970-01-01T00:00:00Z") == 0
    assert parse_timestamp_us("2026-11-29T10:00:00.123456789Z") == parse_timestamp_us("2026-11-29T10:00:00.123456Z")
    assert parse_timestamp_us("0000-03-01T00:00:00Z") - parse_timestamp_us("0000-02-28T00:00:00Z") == 2 * 86_400_000_000
    with pytest.raises(ValueError):
        parse_timestamp_us("yesterday")


def test_strict_mode_raises_on_a_fold_diagnostic() -> None:
    reader = StreamReader(strict=True)
    with pytest.raises(StreamError) as raised:
        reader.feed(started() + started())
    assert (raised.value.line, raised.value.code) == (2, "seq_not_increasing")


WRITER = textwrap.dedent(
    """
    import sys
    from trainwire.writer.run import Run
    run = Run(sys.argv[1], run_id="killed-run", step_interval_s=0, heartbeat_interval_s=2, heartbeat_thread=False)
    run.start(total_steps=100000, provenance=False)
    step = 0
    while True:
        step += 1
        run.step(step, loss=1.0 / step, learning_rate=1e-3)
        if step == 50:
            print("ready", flush=True)
    """
)


def test_a_run_killed_mid_stream_reads_cleanly_as_running_then_stale(tmp_path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path)], stdout=subprocess.PIPE)
    try:
        assert child.stdout is not None and child.stdout.readline() == b"ready\n"
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    assert child.returncode == -signal.SIGKILL
    data = (tmp_path / "progress.jsonl").read_bytes()
    state = read_state(data)
    (run,) = state["runs"]
    assert state["diagnostics"] == [] and run["status"] == "running" and run["finished"] is None
    assert run["step"] >= 50 and run["heartbeat_interval_s"] == 2
    last = parse_timestamp_us(run["last_ts"])
    just_after = datetime.fromtimestamp((last + 5_000_000) / 1e6, timezone.utc)  # within 3 heartbeats
    much_later = datetime.fromtimestamp((last + 7_000_000) / 1e6, timezone.utc)
    assert read_state(data, now=just_after)["runs"][0]["status"] == "running"
    assert read_state(data, now=much_later)["runs"][0]["status"] == "stale"
    STATE_VALIDATOR.validate(read_state(data, now=much_later))


def test_the_state_matches_the_schema_for_every_conformance_stream() -> None:
    cases = cases_dir()
    streams = sorted(cases.glob("*/stream.ndjson"))
    assert streams
    for stream in streams:
        STATE_VALIDATOR.validate(read_state(stream.read_bytes(), now="2030-01-01T00:00:00Z"))


def test_a_now_before_the_last_line_never_makes_a_run_stale() -> None:
    assert read_state(started(heartbeat_interval_s=1), now="2000-01-01T00:00:00Z")["runs"][0]["status"] == "running"


def test_a_state_a_reader_of_contract_1_0_saved_goes_on_with_the_1_1_fields_at_their_start() -> None:
    first = StreamReader()
    first.feed(started())
    saved = first.to_dict()
    (old,) = saved["runs"]
    for name in ("phase_progress", "cycle", "rollbacks", "stop_criterion"):
        del old[name]
    old["trials"] = {"count": 0, "best": None}
    reader = StreamReader(resume=saved)
    reader.feed(event(2, "train.rolled_back", previous_step=6, step=4, checkpoint=None, reason=None))
    (run,) = reader.to_dict()["runs"]
    assert run["rollbacks"] == [{"previous_step": 6, "step": 4, "checkpoint": None, "reason": None, "trial": None}]
    assert [run["trials"]["list"], run["trials"]["total"], run["cycle"], run["attempt"]] == [[], None, None, 1]
