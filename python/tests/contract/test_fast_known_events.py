"""The optional fast decoder (the `fast` extra) against pydantic-core's `KNOWN_EVENT_DICTS`:
whatever it accepts gives the same dicts, with the same types; each known hazard falls back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from pydantic_core import ValidationError
from support.paths import ROOT

import trainwire.lines.decoder as decoder_module
from trainwire.conformance.schema_check import load_bundle
from trainwire.contract.clock import FakeClock
from trainwire.contract.fast_known_events import fast_decoder
from trainwire.contract.known_event_dicts import KNOWN_EVENT_CORE_SCHEMA, KNOWN_EVENT_DICTS
from trainwire.lines.decoder import Decoder
from trainwire.writer.run import Run
from trainwire.writer.sinks import MemorySink

FAST = fast_decoder(KNOWN_EVENT_CORE_SCHEMA)
STEP = {
    "schema_version": 1,
    "seq": 6,
    "ts": "2026-11-29T10:00:01.500000Z",
    "run_id": "run-1",
    "event": "train.step",
    "step": 4,
    "total_steps": 100,
    "epoch": 0.5,
    "loss": 2.5,
    "learning_rate": 5e-05,
    "elapsed_s": 1.0,
    "eta_s": 3.5,
    "progress": 0.04,
}


def _pydantic(line: bytes) -> dict[str, Any] | None:
    try:
        event: dict[str, Any] = KNOWN_EVENT_DICTS.validate_json(line)
    except (ValidationError, TypeError):
        return None
    return event


def _identical(fast: Any, slow: Any) -> bool:
    """Equal, and of the same types all the way down (`1` is not `1.0`, `True` not `1`, `-0.0` not `0.0`)."""
    if type(fast) is not type(slow):
        return False
    if isinstance(fast, dict):
        return fast.keys() == slow.keys() and all(_identical(fast[key], slow[key]) for key in fast)
    if isinstance(fast, list):
        return len(fast) == len(slow) and all(map(_identical, fast, slow))
    return repr(fast) == repr(slow)  # -0.0 is not 0.0


def judged(body: bytes) -> list[dict[str, Any]] | None:
    """The fast decoder's answer for `body`, checked: None, or pydantic's own dicts line by line."""
    assert FAST is not None, "the dev extra installs msgspec: the fast decoder must be there"
    events = FAST(body)
    if events is not None:
        lines = body.split(b"\n")
        assert len(events) == len(lines)
        for line, event in zip(lines, events, strict=True):
            assert _identical(event, _pydantic(line)), line
    return events


def step_line(**changes: Any) -> bytes:
    text = json.dumps({**STEP, **changes}, ensure_ascii=False)
    try:
        return text.encode()
    except UnicodeEncodeError:  # a lone surrogate: escaped
        return json.dumps({**STEP, **changes}).encode()


def test_a_plain_step_is_decoded_as_pydantic_decodes_it() -> None:
    assert judged(step_line(grad_norm=1.5, metrics={"acc": 0.5}, stage={"name": "a", "index": 1, "count": 2}))


@pytest.mark.parametrize(
    "line",
    [
        pytest.param(step_line(extra_key=1), id="an extra key (pydantic keeps it)"),
        pytest.param(step_line(stage={"name": "a", "index": 1, "count": 2, "x": 0}), id="an extra nested key"),
        pytest.param(step_line(run_id="abc\n"), id="an escaped newline before the end of a pattern"),
        pytest.param(step_line(loss="\ud800"), id="a lone surrogate"),
        pytest.param(step_line(step=True), id="true for an integer"),
        pytest.param(step_line(schema_version=True), id="true for the integer constant 1"),
        pytest.param(step_line(schema_version=1.0), id="1.0 for the integer constant 1"),
        pytest.param(step_line(step=2**64), id="an integer past 64 bits"),
        pytest.param(step_line(step=2**53), id="an integer past 2^53 where the schema stops there"),
        pytest.param(step_line()[:-1] + b',"loss":1e400}', id="an overflowing number"),
        pytest.param(step_line()[:-1] + b',"loss":NaN}', id="a NaN token"),
        pytest.param(step_line() + b"\n", id="a blank line"),
        pytest.param(step_line() + b"," + step_line(), id="two events on one line"),
        pytest.param(step_line()[:-1] + b',"metrics":{"a":[' + b"\n" + b"]}}", id="one event over two lines"),
        pytest.param(step_line(metrics={"x" * 257: 1.0}), id="a key over its length in code points"),
        pytest.param(step_line(event="x.vendor"), id="an unknown event"),
        pytest.param(step_line()[:-1] + b"\xff}", id="invalid UTF-8"),
        pytest.param(step_line().replace(b'"train.step"', b'"\xf2rain.step"'), id="invalid UTF-8 in a string"),
        pytest.param(step_line().replace(b'"run-1"', b'"run-\xf2"'), id="a string cut inside a UTF-8 sequence"),
        pytest.param(b"\xef\xbb\xbf" + step_line(), id="a byte order mark inside the stream"),
        pytest.param(step_line().replace(b'"run-1"', b'"run\x01"'), id="a raw control character"),
        pytest.param(step_line().replace(b'"seq": 6', b'"seq": 06'), id="a leading zero"),
        pytest.param(step_line(loss=2.5).replace(b"2.5", b"2.5e", 1), id="a cut exponent"),
    ],
)
def test_a_hazard_falls_back_to_pydantic(line: bytes) -> None:
    assert judged(line) is None


@pytest.mark.parametrize(
    "line",
    [
        pytest.param(step_line(loss=3), id="an integer in a float field is a float on both sides"),
        pytest.param(step_line(metrics={"🚀" * 256: 2}), id="a key's length in code points"),
        pytest.param(step_line(metrics={"a": None}), id="a null metric"),
        pytest.param(step_line()[:-1] + b',"loss":1.0,"loss":2}', id="a duplicate key: the last wins"),
        pytest.param(step_line(step=2**53 - 1), id="the largest safe integer"),
        pytest.param(step_line() + b"\r", id="a CRLF line ending"),
        pytest.param(b"  " + step_line(loss=-0.0) + b" ", id="spaces around the object, a negative zero"),
    ],
)
def test_what_the_fast_decoder_takes_it_takes_as_pydantic_does(line: bytes) -> None:
    assert judged(line) is not None


def test_free_form_values_and_unions_keep_their_types() -> None:
    trial = {
        "schema_version": 1,
        "seq": 2,
        "ts": "2026-11-29T10:00:01Z",
        "run_id": "run-1",
        "event": "trial.started",
        "trial": 1,
        "attempt": 1,
        "params": {"a": 1, "b": 1.0, "c": "x", "d": True, "e": 2**70, "f": 2**53 + 1},
    }
    (event, _) = judged(json.dumps(trial).encode() + b"\n" + step_line()) or [None, None]
    assert event is not None and type(event["params"]["d"]) is bool and event["params"]["e"] == 2**70


def test_a_pattern_is_anchored_at_the_very_end() -> None:
    import msgspec

    from trainwire.contract.fast_known_events import _Translation

    run_id = _Translation(msgspec).type(KNOWN_EVENT_CORE_SCHEMA["choices"]["train.step"]["fields"]["run_id"]["schema"])
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert("abc\n", run_id)  # Python's `$` alone would take it


def test_a_node_the_translation_does_not_know_leaves_its_event_to_pydantic() -> None:
    schema = json.loads(json.dumps(KNOWN_EVENT_CORE_SCHEMA))
    schema["choices"]["train.step"]["fields"]["loss"]["schema"] = {"type": "decimal"}
    fast = fast_decoder(schema)
    assert fast is not None and fast(step_line()) is None
    assert fast(json.dumps({**STEP, "event": "train.epoch", "epoch": 1}).encode().replace(b'"step"', b'"x"')) is None


def _writer_steps(count: int) -> bytes:
    sink = MemorySink()
    with Run(
        run_id="fast", sinks=[sink], heartbeat_interval_s=None, rank=0, clock=FakeClock("2026-12-01T00:00:00Z")
    ) as run:
        for step in range(1, count + 1):
            run.step(step, loss=1.0 / step, learning_rate=1e-3, metrics={"acc": 0.5})
    return sink.getvalue()


def test_a_plain_step_stream_takes_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The speed of `make bench` cannot vanish unseen: the decoder's chunk of steps goes through it."""
    lines = [line for line in _writer_steps(50).splitlines() if b'"train.step"' in line]
    taken: list[int] = []
    fast = decoder_module._fast_body
    assert fast is not None

    def counted(body: bytes) -> list[dict[str, Any]] | None:
        events = fast(body)
        taken.append(0 if events is None else len(events))
        return events

    monkeypatch.setattr(decoder_module, "_fast_body", counted)
    events = Decoder().feed(b"\n".join(lines) + b"\n").dicts
    assert taken == [len(lines) - 1] and len(events) == len(lines)  # the first line completes the partial one
    assert all(_identical(event, _pydantic(line)) for event, line in zip(events, lines, strict=True))


def test_without_msgspec_the_decoder_is_todays() -> None:
    code = "import sys; sys.modules['msgspec'] = None\nimport trainwire.lines.decoder as d\nassert d._fast_body is None"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


# -- differential: drawn events and their mutations, fast against pydantic

EPOCH = datetime(2000, 1, 1, tzinfo=timezone.utc)
EVENTS = ["train.step", "eval.completed", "trial.started", "run.finished", "train.epoch", "phase.progress"]


@cache
def _drawn(event: str) -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(lambda line, ts: {**line, "ts": ts}, from_schema(_event_schema(event)), TIMESTAMPS)


def _event_schema(event: str) -> dict[str, Any]:
    defs = json.loads(json.dumps(load_bundle()["$defs"]))
    # patterns plus `format: date-time` are beyond hypothesis-jsonschema: drawn below instead
    defs["Timestamp"] = {"const": "2026-11-29T10:00:00.000000Z"}
    defs["RunId"] = {"const": "run"}
    defs["RelativePath"] = {"enum": ["checkpoints/checkpoint-1", "étape/🚀"]}
    defs["PhaseName"] = {"enum": ["train", "a" * 64]}
    name = next(
        key for key, value in defs.items() if value.get("properties", {}).get("event", {}).get("const") == event
    )
    return {"$defs": defs, "$ref": f"#/$defs/{name}"}


TIMESTAMPS = st.integers(0, 40 * 365 * 86400 * 10**6).map(
    lambda us: (EPOCH + timedelta(microseconds=us)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
)
ODD_VALUES = st.sampled_from(
    [True, False, 0, 1, 3, -1, 1.0, 0.5, -0.0, 1e300, 2**53, 2**53 + 1, 2**63, 2**64, 2**70, -(2**64), None, "", "x", "a\n",
     "\x7f", "\ud800", "é🚀", {}, {"k": 1}, {"event": "train.step"}, [], [1]]
)  # fmt: skip
EVENT_DICTS = st.sampled_from(EVENTS).flatmap(_drawn)


@st.composite
def lines(draw: st.DrawFn) -> bytes:
    """A drawn event, often mutated: a key set to an odd value, a nested extra key, a duplicate key."""
    event = draw(EVENT_DICTS)
    mutation = draw(st.sampled_from(["none", "none", "value", "nested", "duplicate", "integral"]))
    keys = sorted(event)
    if mutation == "value":
        event[draw(st.sampled_from([*keys, "extra"]))] = draw(ODD_VALUES)
    elif mutation == "nested":
        nested = [key for key in keys if isinstance(event[key], dict)]
        if nested:
            event[draw(st.sampled_from(nested))][draw(st.sampled_from(["x", "name", "a"]))] = draw(ODD_VALUES)
    elif mutation == "integral":
        event = {
            key: int(value) if type(value) is float and value.is_integer() else value for key, value in event.items()
        }
    text = json.dumps(event, ensure_ascii=draw(st.sampled_from([False, False, True])))  # escapes fall back
    if mutation == "duplicate":
        key = draw(st.sampled_from(keys))
        text = text[:-1] + f", {json.dumps(key)}: {json.dumps(draw(ODD_VALUES))}}}"
    return text.encode(errors="backslashreplace")  # a lone surrogate escaped


@settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.lists(lines(), min_size=1, max_size=3))
def test_drawn_and_mutated_lines_are_decoded_as_pydantic_decodes_them_or_left_to_it(body: list[bytes]) -> None:
    judged(b"\n".join(body))


def test_without_the_fast_path_the_reader_tests_pass_alike() -> None:
    """`TRAINWIRE_FAST=0` turns the fast decoder off: the reader's, the lines' and the conformance
    tests pass so too (the suite's streams, the mutations checked against a JSON Schema validator)."""
    env = {**os.environ, "TRAINWIRE_FAST": "0"}
    off = "import trainwire.lines.decoder as d; assert d._fast_body is None"
    subprocess.run([sys.executable, "-c", off], check=True, env=env, timeout=60)
    tests = [
        "python/tests/conformance",
        *(f"python/tests/reader/test_{name}.py" for name in ("decoder", "state", "invariants", "resume")),
        *(f"python/tests/lines/test_{name}.py" for name in ("series_batches", "verdict", "view_events")),
    ]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:]
