"""Fuzzing (c) and (d): any split gives the state of the whole stream; mutated streams never
make a reader raise, never lose a valid line, and give the same state in Python and TypeScript."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator

import pytest
from conformance_support import FUZZ, ReaderSession, typescript_argv
from fuzz_strategies import BOM, hazardous, mutated, scenarios, splits
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trainwire.conformance.diff import first_difference
from trainwire.conformance.runner import comparable_state
from trainwire.conformance.scenario import play
from trainwire.conformance.schema_check import line_verdict
from trainwire.contract import canonical
from trainwire.reader.decoder import parse_strict
from trainwire.reader.state import StreamReader, read_state

FUZZ_SETTINGS = settings(FUZZ, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@st.composite
def streams(draw: st.DrawFn, *, long_line_bytes: int | None = None) -> bytes:
    """A reference writer's stream (sometimes two runs appended), then mutated, hazards of
    the reader rules included."""
    data = play(draw(scenarios()))
    if draw(st.booleans()):
        data += play(draw(scenarios()))
    return draw(mutated(data, long_line_bytes=long_line_bytes, hazards=True))


def as_written(state: dict) -> dict:
    """The state as its canonical JSON says it (an overflowing integer kept in an unknown field is `null`)."""
    return json.loads(canonical.dumps(state))


def read_in_chunks(chunks: list[bytes], **options: int) -> dict:
    reader = StreamReader(**options)
    for chunk in chunks:
        reader.feed(chunk)
    reader.finish()
    return reader.to_dict()


def applicable_lines(data: bytes, max_line_bytes: int = 1 << 20) -> Counter[str]:
    """Per run id, the lines a reader must apply, judged with jsonschema (not the reader)."""
    applied: Counter[str] = Counter()
    last_seq: dict[str, int] = {}
    finished: set[str] = set()
    *lines, _tail = data.removeprefix(BOM).split(b"\n")
    for raw in lines:
        if len(raw) > max_line_bytes:
            continue
        try:
            text = raw.removesuffix(b"\r").decode("utf-8")
        except UnicodeDecodeError:
            continue
        if not text.strip(" \t") or line_verdict(text) == "invalid":
            continue
        line = parse_strict(text)
        run, seq = line["run_id"], line["seq"]
        if run in finished or seq <= last_seq.get(run, 0):
            continue
        applied[run] += 1
        last_seq[run] = seq
        if line["event"] == "run.finished":
            finished.add(run)
    return applied


@pytest.fixture(scope="module")
def typescript() -> Iterator[ReaderSession]:
    session = ReaderSession(typescript_argv())
    yield session
    session.close()


@FUZZ_SETTINGS
@given(data=st.data())
def test_any_split_gives_the_state_of_the_whole_stream(data):
    stream = data.draw(streams())
    assert read_in_chunks(data.draw(splits(stream))) == read_state(stream)
    assert read_in_chunks([bytes([byte]) for byte in stream[:3000]]) == read_state(stream[:3000])


@FUZZ_SETTINGS
@given(data=st.data())
def test_small_line_limits_skip_long_lines_and_lose_nothing_else(data):
    stream = data.draw(streams(long_line_bytes=300))
    state = read_in_chunks(data.draw(splits(stream)), max_line_bytes=400)
    assert {run["run_id"]: run["events"] for run in state["runs"]} == dict(applicable_lines(stream, 400))
    assert any(d["code"] == "line_too_long" for d in state["diagnostics"]) == any(
        len(line) > 400 for line in stream.split(b"\n")[:-1]
    )


@FUZZ_SETTINGS
@given(data=st.data())
def test_mutated_streams_read_alike_in_python_and_typescript_and_lose_no_valid_line(typescript, data):
    stream = data.draw(streams())
    python = read_state(stream)
    assert {run["run_id"]: run["events"] for run in python["runs"]} == dict(applicable_lines(stream))
    typescript_state = typescript.state(data.draw(splits(stream)))
    difference = first_difference(comparable_state(as_written(python)), comparable_state(typescript_state))
    assert difference is None, difference.describe()


@FUZZ_SETTINGS
@given(data=st.data())
def test_hazards_of_the_reader_rules_read_alike_in_python_typescript_and_the_schema(typescript, data):
    """BOMs, odd whitespace, overflowing numbers, deep nesting, duplicate keys on many lines,
    cut anywhere, multi-byte characters torn between chunks included."""
    stream = data.draw(hazardous(play(data.draw(scenarios()))))
    chunks = data.draw(splits(stream))
    python = read_in_chunks(chunks)
    assert python == read_state(stream)
    assert {run["run_id"]: run["events"] for run in python["runs"]} == dict(applicable_lines(stream))
    difference = first_difference(comparable_state(as_written(python)), comparable_state(typescript.state(chunks)))
    assert difference is None, difference.describe()
