"""Sinks and the dispatcher: real files, a real stdout, callbacks that misbehave."""

from __future__ import annotations

import enum
import io
import json
import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_core import from_json

from trainwire.contract.models import EVENT_ADAPTER
from trainwire.writer.encoding import encode_line
from trainwire.writer.run import Run
from trainwire.writer.sinks import CallbackSink, Dispatcher, FileSink, MemorySink, Sink, StdoutSink, reader_view

LINE = b'{"a":1}\n'


def test_file_sink_appends_and_each_line_is_on_disk_when_write_returns(tmp_path: Path) -> None:
    path = tmp_path / "progress.jsonl"
    path.write_bytes(b'{"earlier":true}\n')
    sink = FileSink(path, fsync=True)
    sink.write(LINE, {})
    # no buffer in between: another reader sees the line at once
    assert path.read_bytes() == b'{"earlier":true}\n' + LINE
    sink.write(b'{"b":"\xc3\xa9"}\n', {})
    sink.close()
    assert path.read_bytes().splitlines() == [b'{"earlier":true}', b'{"a":1}', b'{"b":"\xc3\xa9"}']


def test_every_sink_satisfies_the_protocol(tmp_path: Path) -> None:
    sinks = [FileSink(tmp_path / "f"), StdoutSink(io.BytesIO()), CallbackSink(print), MemorySink()]
    assert all(isinstance(sink, Sink) for sink in sinks)


def test_stdout_sink_writes_bytes_or_text_and_flushes() -> None:
    binary, text = io.BytesIO(), io.StringIO()
    StdoutSink(binary).write(LINE, {})
    StdoutSink(text).write(LINE, {})
    assert binary.getvalue() == LINE and text.getvalue() == LINE.decode()


def test_stdout_sink_in_a_process_gives_ndjson_on_stdout_and_logs_on_stderr(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        from trainwire.writer.run import Run
        with Run(stdout=True, run_id="stdout-run", heartbeat_interval_s=None, step_interval_s=0) as run:
            run.start(total_steps=3, provenance=False)
            for step in (1, 2, 3):
                run.step(step, loss=float("nan"), metrics={"note": 1.0})
            run.checkpoint(3, "/somewhere/else")  # outside: a WARNING on stderr
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120, cwd=tmp_path, check=True)
    lines = done.stdout.splitlines(keepends=True)
    assert [json.loads(line)["event"] for line in lines] == ["run.started", *["train.step"] * 3, "run.finished"]
    for line in lines:
        EVENT_ADAPTER.validate_json(line, strict=True)
    assert b"outside the output directory" in done.stderr
    assert b"outside" not in done.stdout


def test_each_callback_gets_its_own_read_only_copy(caplog: pytest.LogCaptureFixture) -> None:
    received: list[Any] = []

    def vandal(event: Any) -> None:
        event["metrics"]["acc"] = -1.0  # nested values are its own copy
        event["event"] = "changed"  # the top level is read-only: raises, and the callback is dropped

    caplog.set_level(logging.WARNING, logger="trainwire")
    memory = MemorySink()
    run = Run(run_id="copies", callbacks=[vandal, received.append], sinks=[memory], heartbeat_interval_s=None, rank=0)
    run.start(provenance=False)
    received.clear()  # the vandal was dropped at run.started; the evaluations are what matter
    run.eval(1, {"acc": 0.5, "bad": float("nan")})
    run.eval(2, {"acc": 0.75})
    assert [event["metrics"] for event in received] == [{"acc": 0.5, "bad": None}, {"acc": 0.75}]
    assert [event["metrics"] for event in memory.events[1:]] == [{"acc": 0.5, "bad": None}, {"acc": 0.75}]
    assert len([record for record in caplog.records if record.levelno == logging.WARNING]) == 1


def test_memory_sink_keeps_lines_events_and_raw_bytes() -> None:
    sink = MemorySink()
    sink.write(LINE, {"a": 1})
    sink.write_raw(b"torn")
    assert sink.lines == [LINE, b"torn"] and sink.events == [{"a": 1}]
    assert sink.getvalue() == LINE + b"torn"


class Exploding:
    """A sink whose every method raises."""

    def __init__(self) -> None:
        self.writes = 0

    def write(self, line: bytes, event: dict[str, Any]) -> None:
        self.writes += 1
        raise OSError("device gone")

    def close(self) -> None:
        raise OSError("cannot close either")


def test_the_dispatcher_disables_a_failing_sink_once_and_never_raises(caplog: pytest.LogCaptureFixture) -> None:
    exploding, memory = Exploding(), MemorySink()
    dispatcher = Dispatcher([exploding, memory])
    caplog.set_level(logging.DEBUG, logger="trainwire")
    for _ in range(3):
        dispatcher.dispatch(LINE, {})
    dispatcher.close()
    assert exploding.writes == 1 and len(memory.lines) == 3
    warnings = [record for record in caplog.records if record.levelno == logging.WARNING]
    assert len(warnings) == 1 and "device gone" in warnings[0].getMessage()
    Dispatcher([Exploding()]).close()  # a close that raises is swallowed too


class Level(enum.IntEnum):
    HIGH = 3


def typed(value: Any) -> Any:
    """`value` with the type of every part spelled out: 5 and 5.0 (and -0.0 and 0.0) differ."""
    if isinstance(value, dict):
        return {key: typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [typed(item) for item in value]
    return (type(value).__name__, repr(value))


def assert_reader_view_is_decoded(event: dict[str, Any]) -> None:
    line = encode_line(event)
    view = reader_view(line, event)
    assert typed(view) == typed(from_json(line))
    assert view is not event


@pytest.mark.parametrize(
    "event",
    [
        {"seq": 1, "event": "train.step", "loss": 2.5, "learning_rate": 5e-05, "epoch": None, "ok": True, "n": 2**70},
        {"loss": -0.0, "tiny": 5e-324, "big": 1.7976931348623157e308, "whole": 3.0, "small": 1e-07},
        {"loss": float("nan"), "eta_s": float("inf")},  # written as null
        {"note": "caf\u00e9"},
        {"note": "lone \ud800 surrogate"},  # written replaced
        {"metrics": {"acc": 0.5}},  # nested: decoded, its own copy
        {"loss": numpy.float32(1.5), "step": numpy.int64(3), "level": Level.HIGH},  # converted by the encoder
        {"path": ("a", "b")},
    ],
)
def test_a_callback_sees_what_a_reader_decodes_from_the_line(event: dict[str, Any]) -> None:
    assert_reader_view_is_decoded(event)


scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8)
)


@settings(max_examples=300, deadline=None)
@given(event=st.dictionaries(st.text(min_size=1, max_size=6), scalars, max_size=12))
def test_for_any_plain_line_the_copy_equals_the_decoded_line(event: dict[str, Any]) -> None:
    assert_reader_view_is_decoded(event)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_run_made_in_a_forked_child_writes_from_that_child(tmp_path: Path) -> None:
    parent = Run(tmp_path / "parent", run_id="parent", step_interval_s=0, heartbeat_interval_s=None)
    parent.start(total_steps=2, provenance=False)
    child = os.fork()
    if child == 0:
        try:
            parent.step(1)  # the parent's run: not this process's stream
            with Run(tmp_path / "child", run_id="child", step_interval_s=0, heartbeat_interval_s=None) as own:
                own.start(total_steps=1, provenance=False)
                own.step(1)
        finally:
            os._exit(0)
    assert os.waitpid(child, 0)[1] == 0
    parent.finish()
    events = [json.loads(line)["event"] for line in (tmp_path / "child" / "progress.jsonl").read_text().splitlines()]
    assert events == ["run.started", "train.step", "run.finished"]
    written = [json.loads(line)["event"] for line in (tmp_path / "parent" / "progress.jsonl").read_text().splitlines()]
    assert written == ["run.started", "run.finished"]
