"""A writer that never writes what readers drop (writer rules 1, 3, 8, 11): lines under
the reader limit, newline repair, bad values converted or dropped, a stream that always
starts with `run.started` and ends at `run.finished`."""

from __future__ import annotations

import errno
import json
import logging
import os
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from trainwire.contract.clock import FakeClock
from trainwire.reader.state import StreamReader
from trainwire.writer import sinks
from trainwire.writer.line_check import CUT_KEY, LINE_LIMIT
from trainwire.writer.run import RejectedInput, Run
from trainwire.writer.sinks import FileSink, MemorySink


def read(data: bytes) -> StreamReader:
    reader = StreamReader()
    reader.feed(data)
    reader.finish()
    return reader


def events_of(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in data.splitlines() if line.strip()]


def memory_run(**options: Any) -> tuple[Run, MemorySink]:
    sink = MemorySink()
    options = {
        "run_id": "r",
        "heartbeat_interval_s": None,
        "rank": 0,
        "clock": FakeClock("2026-12-01T00:00:00Z"),
        **options,
    }
    return Run(sinks=[sink], **options), sink


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]


# -- the line limit ---------------------------------------------------------------------


def test_a_huge_config_is_cut_and_run_started_stays_readable(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="trainwire")
    run, sink = memory_run()
    config = {"lr": 0.1, "vocabulary": "x" * 2_000_000, "layers": [{"name": f"l{i}"} for i in range(10)]}
    run.start(total_steps=10, config=config, provenance=False)
    run.emit("x.note", x_blob=["y" * 600_000, "z" * 600_000])
    run.finish()
    first = sink.lines[0]
    assert len(first) - 1 <= LINE_LIMIT
    reader = read(sink.getvalue())
    assert reader.diagnostics == []
    started = events_of(sink.getvalue())[0]
    assert started["total_steps"] == 10 and started["config"]["lr"] == 0.1 and len(started["config"]["layers"]) == 10
    assert started["config"]["vocabulary"].startswith("<cut by the writer: 2000002 bytes")
    assert config["vocabulary"] == "x" * 2_000_000  # the caller's config is not changed
    note = events_of(sink.getvalue())[1]
    assert note["x_blob"][1] == "z" * 600_000 and note["x_blob"][0].startswith("<cut")  # only what must go
    assert len([message for message in warnings(caplog) if "cut" in message]) == 1  # warned once


def test_a_config_of_many_small_values_is_cut_whole_into_a_marker() -> None:
    run, sink = memory_run()
    run.start(config={f"k{i}": i for i in range(200_000)}, provenance=False)
    run.finish()
    config = events_of(sink.getvalue())[0]["config"]
    assert list(config) == [CUT_KEY] and "bytes over the line limit" in config[CUT_KEY]
    assert read(sink.getvalue()).diagnostics == []


# -- newline repair ----------------------------------------------------------------------


def test_appending_after_a_torn_line_starts_on_a_new_line(tmp_path: Path) -> None:
    stream = tmp_path / "progress.jsonl"
    stream.write_bytes(b'{"schema_version":1,"seq":1,"event":"run.start')  # a writer killed mid-line
    with Run(tmp_path, run_id="second", heartbeat_interval_s=None, rank=0) as run:
        run.start(provenance=False)
    reader = read(stream.read_bytes())
    state = reader.to_dict()
    assert [run["run_id"] for run in state["runs"]] == ["second"]
    assert state["runs"][0]["status"] == "succeeded"
    assert [diagnostic["code"] for diagnostic in state["diagnostics"]] == ["invalid_json"]


def test_a_write_that_failed_part_way_is_followed_by_a_newline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "progress.jsonl"
    sink = FileSink(path)
    real_write = os.write
    calls = {"count": 0}

    def disk_full_once(fd: int, data: Any) -> int:
        calls["count"] += 1
        if calls["count"] == 1:
            real_write(fd, bytes(data[:10]))
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(sinks.os, "write", disk_full_once)
    with pytest.raises(OSError):
        sink.write(b'{"a":1}' + b" " * 20 + b"\n", {})
    sink.write(b'{"b":2}\n', {})
    sink.close()
    assert path.read_bytes() == b'{"a":1}   \n{"b":2}\n'


# -- bad values ----------------------------------------------------------------------------


def test_numbers_from_numpy_torch_and_decimal_are_written_as_numbers() -> None:
    run, sink = memory_run(step_interval_s=0)
    run.start(total_steps=np.int64(10), provenance=False)
    run.step(
        np.int64(1),
        loss=torch.tensor(0.5),
        learning_rate=Decimal("0.001"),
        epoch=np.float32(0.25),
        grad_norm=np.float64("nan"),
        tokens_seen=torch.tensor(7),
        metrics={"acc": np.float16(0.5), "n": torch.tensor([3])},
    )
    run.finish()
    started, step = events_of(sink.getvalue())[:2]
    assert started["total_steps"] == 10
    assert (step["step"], step["loss"], step["learning_rate"], step["epoch"]) == (1, 0.5, 0.001, 0.25)
    assert step["grad_norm"] is None and step["tokens_seen"] == 7 and step["metrics"] == {"acc": 0.5, "n": 3}
    assert read(sink.getvalue()).diagnostics == []


def test_bad_values_are_dropped_with_one_warning_per_kind(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="trainwire")
    run, sink = memory_run(step_interval_s=0)
    run.start(total_steps=4, provenance=False)
    run.step(-1, loss=0.1)  # not a step: the event is dropped
    run.step(-2, loss=0.1)  # same kind: no second warning
    run.step(1, loss=Path("/tmp"), learning_rate="0.1", epoch=-1.0)  # fields written as null
    run.phase_started("Train Phase")
    run.phase_started("train")
    run.phase_ended("train", "bogus")
    run.checkpoint(1, "ckpt", reason="whenever")
    run.restarted("disk", step=1)
    run.finish("bogus")
    events = events_of(sink.getvalue())
    assert [event["event"] for event in events] == [
        "run.started", "train.step", "phase.started", "train.restarted", "run.finished"
    ]  # fmt: skip
    step = events[1]
    assert (step["step"], step["loss"], step["learning_rate"], step["epoch"]) == (1, None, None, None)
    assert events[3]["reason"] == "other"
    finished = events[-1]
    assert finished["status"] == "failed" and finished["exit_code"] == 1 and "bogus" in finished["error"]["message"]
    assert read(sink.getvalue()).diagnostics == []
    messages = warnings(caplog)
    assert len([message for message in messages if "train.step.step" in message]) == 1
    assert len(messages) == len(set(message.split(" (warned once")[1] for message in messages))


def test_strict_runs_raise_instead() -> None:
    run, sink = memory_run(strict=True)
    run.start(provenance=False)
    with pytest.raises(RejectedInput):
        run.step(-1)
    with pytest.raises(RejectedInput):
        run.phase_started("Bad")
    with pytest.raises(RejectedInput):
        run.step(1, loss="nan")
    with pytest.raises(RejectedInput):
        run.finish("bogus")
    assert [event["event"] for event in events_of(sink.getvalue())] == ["run.started"]


def test_an_extension_that_would_be_invalid_is_not_written(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="trainwire")
    run, sink = memory_run()
    run.start(provenance=False)
    run.emit("run.heartbeat", phase="Not A Phase", step=1)  # a v1 event with a bad field
    run.emit("x.custom", x_value=1)
    run.finish()
    assert [event["event"] for event in events_of(sink.getvalue())] == ["run.started", "x.custom", "run.finished"]
    assert any("run.heartbeat is not written" in message for message in warnings(caplog))


# -- the first and the last line -------------------------------------------------------


def test_a_run_that_was_not_started_still_begins_with_run_started(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="trainwire")
    run, sink = memory_run(step_interval_s=0)
    run.step(1, total_steps=3, loss=1.0)
    run.finish()
    events = events_of(sink.getvalue())
    assert [event["event"] for event in events] == ["run.started", "train.step", "run.finished"]
    assert [event["seq"] for event in events] == [1, 2, 3]
    assert any("before start()" in message for message in warnings(caplog))


def test_nothing_is_written_after_run_finished(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="trainwire")
    run, sink = memory_run(step_interval_s=0)
    run.start(provenance=False)
    run.finish()
    run.step(1)
    run.eval(1, {"acc": 1.0})
    run.emit("run.finished", status="succeeded")
    run.finish("failed")  # a second finish (a context manager's exit) is silent
    assert [event["event"] for event in events_of(sink.getvalue())] == ["run.started", "run.finished"]
    assert len([message for message in warnings(caplog) if "already finished" in message]) == 1
