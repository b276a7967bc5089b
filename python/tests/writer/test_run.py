"""The emitter (`trainwire.writer.run.Run`) against docs/writer-rules.md, on real files."""

from __future__ import annotations

import calendar
import json
import logging
import os
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from support.stream_files import of

from trainwire.conformance.schema_check import load_bundle, validator_for
from trainwire.contract.clock import FakeClock, SystemClock, format_ts
from trainwire.contract.errors import RunInterrupted
from trainwire.contract.models import EVENT_ADAPTER, EVENT_NAMES
from trainwire.contract.status import EXIT_CODES
from trainwire.writer.run import Run
from trainwire.writer.sinks import FileSink, MemorySink

START = "2026-11-29T10:00:00Z"
ENVELOPE = ["schema_version", "seq", "ts", "run_id", "event"]
TS_RE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z")


def checked(lines: list[bytes], *, jsonschema: bool = True) -> list[dict[str, Any]]:
    """Every line validated strictly by the models (and by the slow jsonschema); the parsed lines."""
    events = []
    for line in lines:
        assert line.endswith(b"\n") and line.count(b"\n") == 1
        EVENT_ADAPTER.validate_json(line, strict=True)
        event = json.loads(line)
        if jsonschema:
            schema = validator_for() if event["event"] in EVENT_NAMES else validator_for(definition="Envelope")
            errors = list(schema.iter_errors(event))
            assert not errors, (event, errors[0].message)
        assert TS_RE.fullmatch(event["ts"])
        events.append(event)
    return events


def read_events(path: Path, *, jsonschema: bool = True) -> list[dict[str, Any]]:
    return checked(path.read_bytes().splitlines(keepends=True), jsonschema=jsonschema)


def fake_run(**options: Any) -> tuple[Run, MemorySink, FakeClock]:
    sink, clock = MemorySink(), FakeClock(START)
    options = {"run_id": "r1", "heartbeat_interval_s": None, **options}
    return Run(sinks=[sink], clock=clock, rank=0, **options), sink, clock


def every_event(run: Run, clock: FakeClock, output_dir: Path) -> None:
    run.start(
        total_steps=4, total_epochs=1, config={"lr": 0.1}, seed=7, world_size=1, resumed_from=None, total_trials=1
    )
    run.trial_started(1, {"lr": 0.1, "layers": [1, 2], "name": "a", "flag": True, "none": None}, baseline=True)
    with run.phase("train", total=4, unit="batches", cycle=1, total_cycles=1, trial=1):
        run.step(
            1,
            loss=2.0,
            learning_rate=0.1,
            grad_norm=1.0,
            samples_per_s=3.0,
            tokens_per_s=4.0,
            tokens_seen=5,
            metrics={"acc": 0.5},
            memory={"cpu": {"peak_bytes": 1024}},
            trial=1,
        )
        run.advance(4)
        clock.advance(1)
        run.heartbeat()
        run.rolled_back(1, 0, checkpoint=output_dir / "checkpoint-0", reason="diverged", trial=1)
        run.restarted("oom", step=0, batch_size_from=16, batch_size_to=14, total_steps=4)
        for step in range(1, 5):
            clock.advance(0.5)
            run.step(step, epoch=step / 4, loss=1.0 / step, learning_rate=0.1)
        run.epoch(1, 4, {"loss": 0.25})
        run.eval(4, {"loss": 0.3}, epoch=1.0)
        run.checkpoint(4, output_dir / "checkpoint-4", "final")
    run.trial_ended(
        1, "succeeded", metrics={"loss": 0.3}, best={"trial": 1, "metric": "loss", "value": 0.3}, accepted=True
    )
    run.stop_requested("api", reason="enough", requested_by="test")
    run.stop_for("loss < 0.5")
    run.emit("x_vendor.noted", x_note="hé")
    run.finish("succeeded", metrics={"loss": 0.3}, artifacts={"model": "model"}, checkpoint="checkpoint-4")


def test_every_event_kind_is_written_valid_in_schema_order(tmp_path: Path) -> None:
    clock = FakeClock(START)
    with Run(tmp_path, run_id="all-events", clock=clock, heartbeat_interval_s=5, heartbeat_thread=False) as run:
        every_event(run, clock, tmp_path)
    events = read_events(tmp_path / "progress.jsonl")

    assert {event["event"] for event in events} == EVENT_NAMES | {"x_vendor.noted"}
    assert [event["seq"] for event in events] == list(range(1, len(events) + 1))
    assert events[-1]["event"] == "run.finished" and len(of(events, "run.finished")) == 1
    bundle = load_bundle()["$defs"]
    titles = {
        definition.get("properties", {}).get("event", {}).get("const"): definition for definition in bundle.values()
    }
    for event in events:
        keys = list(event)
        assert keys[:5] == ENVELOPE
        if event["event"] in titles:  # payload fields in the order the schema lists them
            order = [key for key in titles[event["event"]]["properties"] if key in event and key != "event"]
            assert keys[5:] == order
    started = events[0]
    assert started["producer"] == {"name": "trainwire", "version": "0.1.0"}
    assert started["provenance"]["seed"] == 7 and started["heartbeat_interval_s"] == 5
    assert of(events, "trial.started")[0]["params"] == {
        "lr": 0.1,
        "layers": "[1, 2]",
        "name": "a",
        "flag": True,
        "none": None,
    }
    assert of(events, "checkpoint.saved")[0]["path"] == "checkpoint-4"
    assert of(events, "x_vendor.noted")[0]["x_note"] == "hé"
    assert "hé".encode() in (tmp_path / "progress.jsonl").read_bytes()  # UTF-8, not \u escaped
    finished = events[-1]
    assert (
        finished["step"] == 4
        and finished["checkpoint"] == "checkpoint-4"
        and finished["artifacts"] == {"model": "model"}
    )
    assert run.status == "succeeded" and run.exit_code == 0 and run.closed


def test_seq_is_gap_free_and_in_file_order_across_threads(tmp_path: Path) -> None:
    run = Run(tmp_path, run_id="threads", heartbeat_interval_s=None, step_interval_s=0)
    run.start(total_steps=None, provenance=False)
    barrier = threading.Barrier(8)

    def work(worker: int) -> None:
        barrier.wait()
        for index in range(250):
            run.eval(index, {f"w{worker}": index})
            run.step(index, loss=1.0)

    threads = [threading.Thread(target=work, args=(worker,)) for worker in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    run.finish()
    events = read_events(tmp_path / "progress.jsonl", jsonschema=False)  # 4000 lines: models only
    assert len(events) == 2 + 8 * 250 * 2
    assert [event["seq"] for event in events] == list(range(1, len(events) + 1))


def test_steps_are_throttled_and_the_pending_step_goes_out_first() -> None:
    run, sink, clock = fake_run(step_interval_s=1.0)
    run.start(total_steps=30, provenance=False)
    for step in range(1, 24):
        clock.advance(0.25)
        run.step(step, loss=1.0)
    clock.advance(0.1)
    run.eval(23, {"loss": 0.5})
    for step in range(24, 31):
        clock.advance(0.25)
        run.step(step, loss=1.0)
    run.finish()
    events = checked(sink.lines)

    written = [event["step"] for event in of(events, "train.step")]
    # the first; then one a second (every 4th report); 23 was pending at the eval; 30 == total;
    # after the eval, the interval counts from step 23's own time (5.75 s): 27 at 6.85 s
    assert written == [1, 5, 9, 13, 17, 21, 23, 27, 30]
    names = [event["event"] for event in events]
    pending, evaluation = events[names.index("eval.completed") - 1 : names.index("eval.completed") + 1]
    assert pending["step"] == 23 and pending["ts"] == "2026-11-29T10:00:05.750000Z"  # when it was reported
    assert evaluation["ts"] == "2026-11-29T10:00:05.850000Z"


def test_a_pending_step_is_written_before_the_terminal_event() -> None:
    run, sink, clock = fake_run(step_interval_s=10.0)
    run.start(total_steps=None, provenance=False)
    for step in range(1, 4):
        clock.advance(1)
        run.step(step, loss=float(step))
    run.finish()
    events = checked(sink.lines)
    assert [event["step"] for event in of(events, "train.step")] == [1, 3]
    assert events[-2]["event"] == "train.step" and events[-1]["step"] == 3


def test_zero_interval_writes_every_step() -> None:
    run, sink, clock = fake_run(step_interval_s=0)
    run.start(total_steps=5, provenance=False)
    for step in range(1, 6):
        run.step(step)
    assert [event["step"] for event in of(checked(sink.lines), "train.step")] == [1, 2, 3, 4, 5]


def test_derived_fields_follow_the_current_attempt_after_a_restart() -> None:
    run, sink, clock = fake_run(step_interval_s=0)
    run.start(total_steps=100, provenance=False)
    for step in (1, 2, 3):
        clock.advance(2)
        run.step(step)
    run.restarted("oom", step=0, batch_size_from=16, batch_size_to=14, total_steps=50)
    for step in (1, 2, 4):
        clock.advance(1)
        run.step(step)
    steps = of(checked(sink.lines), "train.step")
    first = [(s["step"], s["elapsed_s"], s["eta_s"], s["progress"]) for s in steps[:3]]
    assert first == [(1, 0.0, None, 0.01), (2, 2.0, 196.0, 0.02), (3, 4.0, 194.0, 0.03)]
    restarted = of(checked(sink.lines), "train.restarted")[0]
    assert (restarted["attempt"], restarted["previous_step"], restarted["step"]) == (2, 3, 0)
    # the new attempt starts at its first report (step 1), with its own pace and total
    second = [(s["step"], s["total_steps"], s["elapsed_s"], s["eta_s"], s["progress"]) for s in steps[3:]]
    assert second == [(1, 50, 0.0, None, 0.02), (2, 50, 1.0, 48.0, 0.04), (4, 50, 2.0, 30.666667, 0.08)]


def test_a_resumed_run_does_not_count_restored_steps() -> None:
    run, sink, clock = fake_run(step_interval_s=0)
    run.start(
        total_steps=1000,
        resumed_from={"run_id": "earlier", "checkpoint": "checkpoint-500", "step": 500},
        provenance=False,
    )
    for step in (501, 502, 510):
        clock.advance(1)
        run.step(step)
    events = checked(sink.lines)
    assert events[0]["resumed_from"] == {"run_id": "earlier", "checkpoint": "checkpoint-500", "step": 500}
    etas = [(s["elapsed_s"], s["eta_s"]) for s in of(events, "train.step")]
    assert etas == [(0.0, None), (1.0, 498.0), (2.0, 108.888889)]


def test_steps_past_the_total_stay_in_range() -> None:
    run, sink, clock = fake_run(step_interval_s=0)
    run.start(total_steps=2, provenance=False)
    for step in (1, 2, 3):
        clock.advance(1)
        run.step(step)
    last = of(checked(sink.lines), "train.step")[-1]
    assert (last["eta_s"], last["progress"]) == (0.0, 1.0)


def test_non_finite_numbers_are_written_as_null(tmp_path: Path) -> None:
    nan, inf = float("nan"), float("inf")
    with Run(tmp_path, run_id="nan", heartbeat_interval_s=None, step_interval_s=0) as run:
        run.start(total_steps=None, total_epochs=inf, provenance=False)
        run.step(1, loss=nan, learning_rate=inf, grad_norm=-inf, metrics={"a": nan, "b": -inf, "c": 1.5})
        run.eval(1, {"loss": nan})
        run.emit("x_vendor.values", x_values=[nan, inf, 1])
        run.finish(metrics={"loss": inf})
    data = (tmp_path / "progress.jsonl").read_bytes()
    assert b"NaN" not in data and b"Infinity" not in data
    events = read_events(tmp_path / "progress.jsonl")
    step = of(events, "train.step")[0]
    assert (step["loss"], step["learning_rate"], step["grad_norm"]) == (None, None, None)
    assert step["metrics"] == {"a": None, "b": None, "c": 1.5}
    assert of(events, "x_vendor.values")[0]["x_values"] == [None, None, 1]
    assert events[-1]["metrics"] == {"loss": None}


def test_a_failed_run_writes_the_error_cut_to_200_characters_and_reraises(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="x{300}"), Run(tmp_path, run_id="fails", heartbeat_interval_s=None) as run:
        run.start(total_steps=None, provenance=False)
        with run.phase("train"):
            raise ValueError("x" * 300)
    events = read_events(tmp_path / "progress.jsonl")
    assert of(events, "phase.ended")[0]["status"] == "failed"
    finished = events[-1]
    assert finished["status"] == "failed" and finished["exit_code"] == 1
    assert finished["error"] == {"type": "ValueError", "message": "x" * 200}
    assert run.exit_code == 1


def test_run_interrupted_ends_the_run_interrupted_and_goes_on(tmp_path: Path) -> None:
    with pytest.raises(RunInterrupted), Run(tmp_path, run_id="stops", heartbeat_interval_s=None) as run:
        run.start(total_steps=None, provenance=False)
        run.stop_requested("control_file", reason="operator")
        with run.phase("train"):
            raise RunInterrupted("control_file")
    events = read_events(tmp_path / "progress.jsonl")
    assert of(events, "phase.ended")[0]["status"] == "interrupted"
    assert (events[-1]["status"], events[-1]["reason"], events[-1]["exit_code"]) == ("interrupted", "control_file", 2)


def test_keyboard_interrupt_ends_the_run_interrupted_by_sigint(tmp_path: Path) -> None:
    with pytest.raises(KeyboardInterrupt), Run(tmp_path, run_id="ctrl-c", heartbeat_interval_s=None) as run:
        run.start(total_steps=None, provenance=False)
        raise KeyboardInterrupt
    finished = read_events(tmp_path / "progress.jsonl")[-1]
    assert (finished["status"], finished["reason"]) == ("interrupted", "sigint")


@pytest.mark.parametrize(
    ("source", "signal", "reason"),
    [
        ("signal", "SIGTERM", "sigterm"),
        ("signal", "SIGINT", "sigint"),
        ("api", None, "api"),
        ("control_file", None, "control_file"),
    ],
)
def test_a_stop_request_gives_the_reason_of_the_interrupted_run(source: str, signal: str | None, reason: str) -> None:
    run, sink, _ = fake_run()
    run.start(total_steps=None, provenance=False)
    run.stop_requested(source, signal=signal, reason="r" * 300)
    run.finish("interrupted")
    events = checked(sink.lines)
    assert run.stop_reason == reason and events[-1]["reason"] == reason
    assert len(events[1]["reason"]) == 200


def test_exactly_one_run_finished_and_nothing_after_it(tmp_path: Path) -> None:
    with Run(tmp_path, run_id="once", heartbeat_interval_s=None, step_interval_s=0) as run:
        run.start(total_steps=None, provenance=False)
        run.step(1)
        run.finish("awaiting_approval")
        run.finish("failed", error=RuntimeError("late"))
        run.step(2)
        run.eval(2, {})
        run.heartbeat()
    events = read_events(tmp_path / "progress.jsonl")
    assert [event["event"] for event in events] == ["run.started", "train.step", "run.finished"]
    assert (events[-1]["status"], events[-1]["exit_code"]) == ("awaiting_approval", 4)
    assert run.status == "awaiting_approval" and run.exit_code == EXIT_CODES["awaiting_approval"]


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (("OutOfMemoryError", "CUDA out of memory."), {"type": "OutOfMemoryError", "message": "CUDA out of memory."}),
        ((MemoryError, "m" * 250), {"type": "MemoryError", "message": "m" * 200}),
        ({"type": "Custom", "message": "why"}, {"type": "Custom", "message": "why"}),
    ],
)
def test_errors_given_as_pairs_or_mappings(error: Any, expected: dict[str, str]) -> None:
    run, sink, _ = fake_run()
    run.finish("failed", error=error)
    assert checked(sink.lines)[-1]["error"] == expected


def test_a_stream_sink_on_a_full_disk_is_warned_once_and_the_run_ends_as_its_training_did(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    if not os.path.exists("/dev/full"):
        pytest.fail("this test needs /dev/full (Linux)")
    memory = MemorySink()
    broken = FileSink("/dev/full")  # every write fails with ENOSPC
    caplog.set_level(logging.WARNING, logger="trainwire")
    with Run(run_id="disk-full", sinks=[broken, memory], heartbeat_interval_s=None, step_interval_s=0) as run:
        run.start(total_steps=100, provenance=False)
        for step in range(1, 101):
            run.step(step, loss=1.0)
    warnings = [record for record in caplog.records if record.levelno == logging.WARNING]
    assert len(warnings) == 2 and all(record.name.startswith("trainwire") for record in warnings)
    assert "could not be written to /dev/full (No space left on device)" in warnings[0].getMessage()
    assert "102 of 102 lines lost in /dev/full" in warnings[1].getMessage()  # the run's end
    events = checked(memory.lines, jsonschema=False)
    assert len(events) == 102 and events[-1]["status"] == "succeeded" and events[-1].get("error") is None
    assert (run.status, run.exit_code) == ("succeeded", 0)


def test_a_stream_whose_file_was_closed_underneath_is_dropped_and_the_run_ends_as_its_training_did(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    memory = MemorySink()
    run = Run(tmp_path, run_id="closed-fd", sinks=[memory], heartbeat_interval_s=None)
    run.start(total_steps=None, provenance=False)
    file_sink = run._dispatcher.sinks[0]  # the sink the run opened on its file
    assert isinstance(file_sink, FileSink)
    os.close(file_sink.fileno())
    caplog.set_level(logging.WARNING, logger="trainwire")
    run.eval(1, {})
    run.eval(2, {})
    run.finish()
    warnings = [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]
    assert len(warnings) == 2 and "3 of 4 lines lost" in warnings[1]  # at the loss, and at the end
    events = checked(memory.lines)
    assert [event["event"] for event in events] == ["run.started", "eval.completed", "eval.completed", "run.finished"]
    assert events[-1]["status"] == "succeeded"
    assert run.exit_code == 0
    assert len(read_events(tmp_path / "progress.jsonl")) == 1


def test_a_raising_callback_is_called_once_then_dropped(caplog: pytest.LogCaptureFixture) -> None:
    calls: list[str] = []
    seen: list[str] = []

    def broken(event: Any) -> None:
        calls.append(event["event"])
        raise RuntimeError("callback bug")

    caplog.set_level(logging.WARNING, logger="trainwire")
    run, sink, _ = fake_run(callbacks=[broken, lambda event: seen.append(event["event"])])
    run.start(total_steps=None, provenance=False)
    run.eval(1, {})
    run.finish()
    assert calls == ["run.started"]
    assert seen == ["run.started", "eval.completed", "run.finished"]
    assert len(sink.lines) == 3
    warnings = [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]
    assert len(warnings) == 1 and "callback bug" in warnings[0]


def test_other_ranks_write_nothing_and_open_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []
    explicit = Run(tmp_path / "explicit", rank=1, callbacks=[seen.append], stdout=True)
    monkeypatch.setenv("RANK", "3")
    from_env = Run(tmp_path / "env", callbacks=[seen.append])
    for run in (explicit, from_env):
        assert not run.active
        with run:
            every_event(run, FakeClock(START), tmp_path)
    assert seen == [] and list(tmp_path.iterdir()) == []


def test_checkpoint_paths_are_made_relative_and_outside_ones_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    output = tmp_path / "out"
    monkeypatch.chdir(tmp_path)
    caplog.set_level(logging.WARNING, logger="trainwire")
    with Run(output, run_id="paths", heartbeat_interval_s=None) as run:
        run.start(provenance=False)
        run.checkpoint(1, output / "ckpt" / "step-1")  # absolute, inside
        run.checkpoint(2, "out/ckpt/step-2")  # relative to the working directory, inside
        run.checkpoint(3, "ckpt/./step-3")  # relative to the output directory
        run.checkpoint(4, tmp_path / "elsewhere")  # absolute, outside: dropped
        run.checkpoint(5, "../escape")  # climbs out: dropped
        run.checkpoint(6, "/etc/passwd")
        run.finish(checkpoint=tmp_path / "elsewhere", artifacts={"model": output / "model", "leak": "/tmp"})
    events = read_events(output / "progress.jsonl")
    assert [event["path"] for event in of(events, "checkpoint.saved")] == ["ckpt/step-1", "ckpt/step-2", "ckpt/step-3"]
    assert events[-1]["checkpoint"] is None and events[-1]["artifacts"] == {"model": "model"}
    assert sum(record.levelno == logging.WARNING for record in caplog.records) == 5


def test_the_heartbeat_thread_writes_when_idle_and_stops_at_finish(tmp_path: Path) -> None:
    run = Run(tmp_path, run_id="beats", heartbeat_interval_s=0.05)
    run.start(total_steps=10, provenance=False)
    run.phase_started("train")
    run.step(3)
    deadline = time.monotonic() + 10
    while b"run.heartbeat" not in (tmp_path / "progress.jsonl").read_bytes():
        assert time.monotonic() < deadline, "no heartbeat within 10 s"
        time.sleep(0.01)
    run.finish()
    assert not any(thread.name.startswith("trainwire-heartbeat") for thread in threading.enumerate())
    events = read_events(tmp_path / "progress.jsonl")
    beat = of(events, "run.heartbeat")[0]
    assert (beat["phase"], beat["step"]) == ("train", 3)
    assert events[0]["heartbeat_interval_s"] == 0.05 and events[-1]["event"] == "run.finished"


def test_run_ids_are_checked_and_generated() -> None:
    for bad in ("", "-starts-with-dash", "has space", "r1\n", "x" * 129):
        with pytest.raises(ValueError):
            Run(run_id=bad)
    generated = Run(clock=FakeClock(START), rank=0).run_id
    assert re.fullmatch(r"20261129T100000-[0-9a-f]{6}", generated)


def test_stage_is_on_every_line_and_emit_cannot_overwrite_the_envelope(caplog: pytest.LogCaptureFixture) -> None:
    stage = {"name": "sft", "index": 1, "count": 2}
    run, sink, _ = fake_run(stage=stage)
    run.start(total_steps=None, provenance=False)
    run.emit("x_vendor.thing", seq=99, run_id="other", x_value=1)
    run.emit("Not An Event", x_value=1)
    events = checked(sink.lines)
    assert all(list(event)[:6] == [*ENVELOPE, "stage"] and event["stage"] == stage for event in events)
    assert (events[1]["seq"], events[1]["run_id"], events[1]["x_value"]) == (2, "r1", 1)
    assert len(events) == 2


def test_timestamps_are_microsecond_utc_and_the_fake_clock_is_exact() -> None:
    assert format_ts(0) == "1970-01-01T00:00:00.000000Z"
    epoch = calendar.timegm((2026, 11, 29, 10, 0, 0))
    assert format_ts(epoch + 0.9999996) == "2026-11-29T10:00:01.000000Z"  # rounds into the next second
    assert format_ts(epoch + 0.5) == "2026-11-29T10:00:00.500000Z"
    clock = FakeClock("2026-11-29T23:59:59.123456789Z")
    assert format_ts(clock.now()) == "2026-11-29T23:59:59.123456Z"
    for _ in range(3):
        clock.advance(0.1)
    assert clock.monotonic() == 0.3 and format_ts(clock.now()) == "2026-11-29T23:59:59.423456Z"
    clock.advance(0.9)  # across midnight: the cached seconds part is renewed
    assert format_ts(clock.now()) == "2026-11-30T00:00:00.323456Z"
    with pytest.raises(ValueError):
        clock.advance(-1)
    with pytest.raises(ValueError):
        FakeClock("2026-11-29 10:00:00Z")
    assert TS_RE.fullmatch(format_ts(SystemClock().now()))
