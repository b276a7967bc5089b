"""trainwire.reader.decoder: framing and the per-line checks of docs/reader-rules.md, sections 1-2."""

from __future__ import annotations

import copy
import json
import tracemalloc
from typing import Any

import jsonschema
import pytest
from support.paths import ROOT

from trainwire.contract.errors import StreamError
from trainwire.contract.models import RunFinished, RunStarted, TrainStep, UnknownEvent
from trainwire.reader.decoder import Decoder

BUNDLE = ROOT / "schemas" / "bundled" / "trainwire-v1.schema.json"

STARTED = {
    "schema_version": 1,
    "seq": 1,
    "ts": "2026-11-29T10:00:00.000000Z",
    "run_id": "r1",
    "event": "run.started",
    "producer": {"name": "t", "version": "1"},
    "total_steps": 10,
    "heartbeat_interval_s": 5,
}
STEP = {
    "schema_version": 1,
    "seq": 2,
    "ts": "2026-11-29T10:00:01.000000Z",
    "run_id": "r1",
    "event": "train.step",
    "step": 5,
    "total_steps": 10,
    "epoch": 0.5,
    "loss": 1.25,
    "learning_rate": 1e-4,
    "elapsed_s": 1.5,
    "eta_s": 1.5,
    "progress": 0.5,
}
FINISHED = {
    "schema_version": 1,
    "seq": 3,
    "ts": "2026-11-29T10:00:02.000000Z",
    "run_id": "r1",
    "event": "run.finished",
    "status": "succeeded",
    "exit_code": 0,
    "error": None,
    "reason": None,
    "step": 10,
    "checkpoint": None,
    "duration_s": 2.0,
    "metrics": {"loss": 0.5},
    "artifacts": {"model": "model/weights.bin"},
}


def line(obj: dict[str, Any], **changes: Any) -> bytes:
    return json.dumps({**obj, **changes}, separators=(",", ":")).encode() + b"\n"


def decode(data: bytes, **options: Any) -> tuple[list[Any], Decoder]:
    decoder = Decoder(**options)
    events = decoder.feed(data)
    decoder.finish()
    return events, decoder


def codes(decoder: Decoder) -> list[tuple[int, str]]:
    return [(d.line, d.code) for d in decoder.diagnostics]


def test_valid_lines_become_typed_events() -> None:
    events, decoder = decode(line(STARTED) + line(STEP) + line(FINISHED))
    assert [e.event for e in events] == ["run.started", "train.step", "run.finished"]
    assert isinstance(events[1], TrainStep) and events[1].loss == 1.25
    assert isinstance(events[2], RunFinished)
    assert decoder.diagnostics == [] and decoder.lines == 3 and decoder.partial_tail_bytes == 0


@pytest.mark.parametrize(
    ("text", "code"),
    [
        (b'{"a":\xff}', "invalid_utf8"),
        (b"\xed\xa0\x80", "invalid_utf8"),  # an encoded surrogate is not UTF-8
        (b"not json", "invalid_json"),
        (line(STEP)[:-1].replace(b'"loss":1.25', b'"loss":NaN'), "invalid_json"),
        (line(STEP)[:-1].replace(b'"loss":1.25', b'"loss":-Infinity'), "invalid_json"),
        (b'{"a":1,}', "invalid_json"),
        (b"{'a':1}", "invalid_json"),
        (b'{"a":1} // comment', "invalid_json"),
        (b'{"a":"tab\there"}', "invalid_json"),
        (b"[1,2]", "schema_violation"),
        (b'"text"', "schema_violation"),
        (b"null", "schema_violation"),
        (line(STEP, schema_version=2)[:-1], "unsupported_version"),
        (line(STEP, schema_version=2.0, loss="bad")[:-1], "unsupported_version"),
        (b'{"schema_version":7}', "unsupported_version"),
        (line(STEP, schema_version=True)[:-1], "schema_violation"),
        (line(STEP, loss="1.5")[:-1], "schema_violation"),
        (line(STEP, step=True)[:-1], "schema_violation"),
        (line(STEP, progress=1.5)[:-1], "schema_violation"),
        (line(STEP, stage=None)[:-1], "schema_violation"),
        (line(STEP, metrics=None)[:-1], "schema_violation"),
        (line(STEP, ts="2026-02-30T10:00:00Z")[:-1], "schema_violation"),
        (line(STEP, ts="2026-11-29T24:00:00Z")[:-1], "schema_violation"),
        (line(STEP, ts="2026-11-29 10:00:00Z")[:-1], "schema_violation"),
        (line(STEP, run_id="has space")[:-1], "schema_violation"),
        (line(STEP, event={})[:-1], "schema_violation"),
        (line(STEP, event=["train.step"])[:-1], "schema_violation"),
        (line(STEP, event="NotAnEvent")[:-1], "schema_violation"),
        (line({k: v for k, v in STEP.items() if k != "loss"})[:-1], "schema_violation"),
    ],
)
def test_a_bad_line_is_skipped_with_the_first_failing_check(text: bytes, code: str) -> None:
    events, decoder = decode(line(STARTED) + text + b"\n" + line(FINISHED))
    assert [e.event for e in events] == ["run.started", "run.finished"]  # the valid line after it survives
    assert codes(decoder) == [(2, code)]
    assert decoder.diagnostics[0].message  # says what, quotes the start of the text


def test_messages_quote_at_most_80_characters_of_the_line() -> None:
    _, decoder = decode(b"x" * 500 + b"\n")
    message = decoder.diagnostics[0].message
    assert '"' + "x" * 80 + '"...' in message and "x" * 81 not in message


def test_integer_valued_numbers_are_integers() -> None:
    events, decoder = decode(line(STEP, step=5.0, seq=2.0, schema_version=1.0, total_steps=1e1))
    assert decoder.diagnostics == []
    assert (events[0].step, events[0].seq, events[0].total_steps) == (5, 2, 10)


def test_unknown_events_are_delivered_with_their_fields() -> None:
    events, decoder = decode(line(STEP, event="model.exported", x_path="a/b", x_nested={"k": [1, 2.5]}))
    (event,) = events
    assert isinstance(event, UnknownEvent) and event.event == "model.exported"
    assert event.model_extra == {
        "step": 5,
        "total_steps": 10,
        "epoch": 0.5,
        "loss": 1.25,
        "learning_rate": 1e-4,
        "elapsed_s": 1.5,
        "eta_s": 1.5,
        "progress": 0.5,
        "x_path": "a/b",
        "x_nested": {"k": [1, 2.5]},
    }
    assert decoder.diagnostics == []


def test_json_that_pydantic_cannot_parse_but_javascript_can_is_still_valid() -> None:
    deep = json.loads("[" * 127 + "]" * 127)  # 128 levels with the line's object: the limit
    text = line(STEP, event="x.y").replace(b'"x.y"', b'"x.y","x_lone":"\\ud800"')
    events, decoder = decode(text + line(STEP, event="x.y", seq=3, x_deep=deep))
    assert decoder.diagnostics == [] and len(events) == 2
    assert events[0].model_extra["x_lone"] == "\ud800"


def test_a_line_nesting_past_the_limit_is_invalid_json_wherever_the_depth_is() -> None:
    too_deep = json.loads("[" * 128 + "]" * 128)
    data = (
        line(STEP, x_deep=too_deep)
        + line(STARTED, seq=2, config={"a": too_deep})
        + line(STEP, seq=3, x_deep=[[0]] * 200)
    )
    events, decoder = decode(data)
    assert [(d.line, d.code) for d in decoder.diagnostics] == [(1, "invalid_json"), (2, "invalid_json")]
    assert "128 levels" in decoder.diagnostics[0].message
    assert len(events) == 1  # many brackets, but shallow


def test_lone_surrogates_in_declared_strings_are_kept_as_the_schema_allows() -> None:
    text = line(STARTED).replace(b'"producer":{"name":"t"', b'"producer":{"name":"t\\udc00"')
    events, decoder = decode(text)
    assert decoder.diagnostics == [] and events[0].producer.name == "t\udc00"


def test_an_overflowing_number_is_refused_in_a_metric_and_kept_in_config() -> None:
    kept = line(STARTED, config={"lr": 0.5}).replace(b"0.5", b"1e400")
    refused = line(STEP, seq=2, metrics={"acc": 0.5}).replace(b"0.5}", b"1e400}")
    events, decoder = decode(kept + refused)
    assert [(d.line, d.code) for d in decoder.diagnostics] == [(2, "schema_violation")]
    assert events[0].config == {"lr": float("inf")}


def test_blank_lines_crlf_and_a_leading_bom_are_accepted() -> None:
    data = b"\xef\xbb\xbf" + line(STARTED)[:-1] + b"\r\n" + b"\n  \t\r\n" + line(STEP)
    events, decoder = decode(data)
    assert [e.event for e in events] == ["run.started", "train.step"]
    assert decoder.diagnostics == [] and decoder.lines == 4 and decoder.consumed_bytes == len(data)


def test_a_bom_split_across_chunks_is_still_skipped_but_not_one_later_in_the_stream() -> None:
    decoder = Decoder()
    events = []
    for piece in (b"\xef", b"\xbb", b"\xbf" + line(STARTED), b"\xef\xbb\xbf" + line(STEP)):
        events += decoder.feed(piece)
    assert [e.event for e in events] == ["run.started"]
    assert codes(decoder) == [(2, "invalid_json")]


def test_no_bom_is_skipped_when_resuming_at_an_offset() -> None:
    events, decoder = decode(b"\xef\xbb\xbf" + line(STEP), offset=100)
    assert events == [] and codes(decoder) == [(1, "invalid_json")]


def test_the_partial_tail_is_kept_and_not_an_error() -> None:
    data = line(STARTED) + line(STEP)[:40]
    events, decoder = decode(data)
    assert len(events) == 1 and decoder.diagnostics == []
    assert decoder.consumed_bytes == len(line(STARTED)) and decoder.partial_tail_bytes == 40


def test_feeding_one_byte_at_a_time_gives_what_feeding_everything_gives() -> None:
    data = (
        b"\xef\xbb\xbf"
        + line(STARTED)
        + b"\r\n"
        + "é".encode()
        + b"\n"
        + b"x" * 300
        + b"\n"
        + line(STEP, x_text="日本語 😀")
        + b'{"schema_version":3}\n'
        + line(FINISHED)
        + b'{"torn'
    )
    whole_events, whole = decode(data, max_line_bytes=299)
    decoder = Decoder(max_line_bytes=299)
    events = [event for byte in data for event in decoder.feed(bytes([byte]))]
    assert events == whole_events
    assert decoder.diagnostics == whole.diagnostics
    assert (decoder.lines, decoder.consumed_bytes, decoder.partial_tail_bytes) == (
        whole.lines,
        whole.consumed_bytes,
        whole.partial_tail_bytes,
    )
    assert codes(decoder) == [(3, "invalid_json"), (4, "line_too_long"), (6, "unsupported_version")]


def test_resuming_at_consumed_bytes_reads_only_the_rest_and_gives_the_same_lines() -> None:
    data = line(STARTED) + b"garbage\n" + line(STEP) + line(FINISHED)
    first = Decoder()
    first_events = first.feed(data[:150])
    resumed = Decoder(offset=first.consumed_bytes, line_number=first.lines)
    resumed_events = resumed.feed(data[first.consumed_bytes :])
    whole_events, whole = decode(data)
    assert first_events + resumed_events == whole_events
    assert first.diagnostics + resumed.diagnostics == whole.diagnostics
    assert (resumed.consumed_bytes, resumed.lines) == (len(data), 4)


def test_a_line_over_the_limit_is_reported_and_never_held_whole() -> None:
    limit = 1000
    decoder = Decoder(max_line_bytes=limit)
    tracemalloc.start()
    try:
        decoder.feed(line(STARTED))
        for _ in range(64):  # 4 MiB in one line, 64 KiB at a time
            decoder.feed(b"y" * 65536)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000  # the limit plus a chunk or two, not 4 MiB
    assert decoder.partial_tail_bytes == 64 * 65536
    events = decoder.feed(b"\n" + line(STEP))
    assert [e.event for e in events] == ["train.step"]
    assert codes(decoder) == [(2, "line_too_long")]
    assert "yyyy" in decoder.diagnostics[0].message


def test_the_limit_counts_a_carriage_return_but_not_the_newline() -> None:
    text = line(STEP)[:-1]
    _, exact = decode(text + b"\n", max_line_bytes=len(text))
    _, with_cr = decode(text + b"\r\n", max_line_bytes=len(text))
    assert exact.diagnostics == []
    assert codes(with_cr) == [(1, "line_too_long")]


def test_strict_mode_raises_at_the_first_problem() -> None:
    decoder = Decoder(strict=True)
    with pytest.raises(StreamError) as raised:
        decoder.feed(line(STARTED) + b"{oops\n")
    assert (raised.value.line, raised.value.code) == (2, "invalid_json")


MUTATIONS: list[tuple[str, Any]] = [
    (field, value)
    for field in (
        "seq",
        "step",
        "total_steps",
        "epoch",
        "loss",
        "eta_s",
        "progress",
        "stage",
        "metrics",
        "grad_norm",
        "tokens_seen",
        "schema_version",
        "x_extra",
    )
    for value in (None, True, 0, -1, 2.0, 0.5, "1", [], {}, {"name": "s", "index": 1, "count": 1}, 1e300, -0.0)
]


def test_the_decoder_agrees_with_a_json_schema_validator_on_every_mutation() -> None:
    """A differential test: pydantic's fast path must not accept what the JSON Schema rejects."""
    validator = jsonschema.Draft202012Validator(
        json.loads(BUNDLE.read_text()), format_checker=jsonschema.FormatChecker()
    )
    disagreements = []
    for base in (STARTED, STEP, FINISHED):
        for field, value in MUTATIONS:
            mutated = copy.deepcopy(base)
            mutated[field] = value
            if (
                isinstance(mutated.get("schema_version"), (int, float))
                and not isinstance(mutated["schema_version"], bool)
                and mutated["schema_version"] > 1
            ):
                continue  # unsupported_version, not a schema question
            events, _ = decode(line(mutated))
            if bool(events) != validator.is_valid(mutated):
                disagreements.append((base["event"], field, value))
    assert disagreements == []


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"stage": None}, "stage"),
        ({"provenance": {"python": None}}, "provenance.python"),
        ({"world_size": None}, "world_size"),
    ],
)
def test_an_optional_field_the_schema_does_not_let_be_null_is_refused_by_name(
    changes: dict[str, Any], field: str
) -> None:
    _, decoder = decode(line(STARTED, **changes))
    assert codes(decoder) == [(1, "schema_violation")]
    assert f"{field} may be absent but not null" in decoder.diagnostics[0].message


def _one_line_at_a_time(data: bytes) -> tuple[list[Any], Decoder]:
    """Each line fed as its own chunk: the line-by-line path, never the whole-chunk one."""
    decoder = Decoder()
    events = [event for piece in data.splitlines(keepends=True) for event in decoder.feed(piece)]
    return events, decoder


OVERFLOWING = [b"1e400", b"1E400", b"1e+400", b"1" * 400, b"-1e400"]


@pytest.mark.parametrize("mutation", range(len(MUTATIONS)))
def test_a_whole_chunk_gives_what_one_line_at_a_time_gives(mutation: int) -> None:
    """The whole-chunk fast path vouches for a chunk only when each line would pass on its own."""
    field, value = MUTATIONS[mutation]
    mutated_step = {**STEP, "seq": 3, field: value}
    data = line(STARTED) + line(STEP) + line(mutated_step) + line(STEP, seq=4, step=6) + line(FINISHED, seq=5)
    whole_events, whole = decode(data)
    events, decoder = _one_line_at_a_time(data)
    assert whole_events == events
    assert whole.diagnostics == decoder.diagnostics


@pytest.mark.parametrize("number", OVERFLOWING)
@pytest.mark.parametrize("where", ["loss", "metrics", "config"])
def test_a_number_that_may_overflow_gets_the_same_answer_inside_a_chunk(number: bytes, where: str) -> None:
    target = b'"loss":' + number if where == "loss" else b'"metrics":{"m":' + number + b"}"
    base = line(STEP) if where != "config" else line(STARTED, seq=2)
    bad = (
        base.replace(b'"loss":1.25', target)
        if where != "config"
        else base.replace(b'"config"', b'"x"').replace(
            b'"heartbeat_interval_s":5', b'"heartbeat_interval_s":5,"config":{"c":' + number + b"}"
        )
    )
    data = line(STARTED) + bad + line(FINISHED)
    whole_events, whole = decode(data)
    events, decoder = _one_line_at_a_time(data)
    assert whole_events == events and whole.diagnostics == decoder.diagnostics
    if b"e" in number.lower():  # (a long digit run's answer belongs to the conformance cases)
        # refused where the schema declares a number; kept inside `config`
        assert codes(whole) == ([] if where == "config" else [(2, "schema_violation")])


def test_typed_events_are_built_only_when_read(monkeypatch: pytest.MonkeyPatch) -> None:
    from trainwire.lines import exact_checks

    built: list[Any] = []
    real = exact_checks.event_model
    monkeypatch.setattr(exact_checks, "event_model", lambda event: built.append(event) or real(event))
    events, _ = decode(line(STARTED) + line(STEP) + line(FINISHED))
    assert len(events) == 3 and built == []
    assert isinstance(events[1], TrainStep) and events[1].loss == 1.25 and len(built) == 3
    assert [type(event) for event in events] == [RunStarted, TrainStep, RunFinished] and len(built) == 3
    assert events.dicts[1]["loss"] == 1.25 and "grad_norm" not in events.dicts[1]


@pytest.mark.parametrize("depth", [127, 128, 129, 300])
def test_nesting_gets_the_same_answer_inside_a_chunk(depth: int) -> None:
    nested = b'{"c":' * (depth - 1) + b"1" + b"}" * (depth - 1)  # the line's object is the first level
    started = line(STARTED, seq=2).replace(b'"heartbeat_interval_s":5', b'"heartbeat_interval_s":5,"config":' + nested)
    data = line(STARTED) + started + line(FINISHED)
    whole_events, whole = decode(data)
    events, decoder = _one_line_at_a_time(data)
    assert whole_events == events and whole.diagnostics == decoder.diagnostics
    assert codes(whole) == ([] if depth <= 128 else [(2, "invalid_json")])


@pytest.mark.parametrize(
    ("ts", "valid"),
    [
        ("2024-02-29T10:00:00Z", True),  # a leap year's February 29 takes the slow path, which knows it
        ("2026-02-29T10:00:00Z", False),
        ("2000-02-29T10:00:00Z", True),
        ("1900-02-29T10:00:00Z", False),
        ("2026-04-30T10:00:00.5Z", True),
        ("2026-04-31T10:00:00Z", False),
        ("2026-12-31T23:59:59.999999999Z", True),
        ("2026-12-31T23:59:60Z", True),  # a leap second, as ajv-formats allows it
        ("2026-12-31T22:59:60Z", False),
        ("2026-11-29T24:00:00Z", False),
        ("2026-11-29T10:60:00Z", False),
        ("2026-00-10T10:00:00Z", False),
        ("2026-13-10T10:00:00Z", False),
        ("2026-11-00T10:00:00Z", False),
    ],
)
def test_a_timestamp_gets_the_same_answer_inside_a_chunk(ts: str, valid: bool) -> None:
    data = line(STARTED) + line(STEP, ts=ts) + line(FINISHED)
    whole_events, whole = decode(data)
    events, decoder = _one_line_at_a_time(data)
    assert whole_events == events and whole.diagnostics == decoder.diagnostics
    assert codes(whole) == ([] if valid else [(2, "schema_violation")])


@pytest.mark.parametrize("token", [b"NaN", b"Infinity", b"-Infinity"])
@pytest.mark.parametrize("where", ["config", "x_extra", "metrics"])
def test_a_non_finite_token_is_invalid_json_anywhere_inside_a_chunk(token: bytes, where: str) -> None:
    """The dict validator takes a bare NaN in a free-form value: the chunk's byte test must not."""
    placeholder = b'"@"'
    if where == "config":
        bad = line(STARTED, seq=2, config={"c": "@"})
    elif where == "x_extra":
        bad = line(STEP, x_extra=["@"])
    else:
        bad = line(STEP, metrics={"m": "@"})
    data = line(STARTED) + bad.replace(placeholder, token) + line(FINISHED)
    whole_events, whole = decode(data)
    events, decoder = _one_line_at_a_time(data)
    assert whole_events == events and whole.diagnostics == decoder.diagnostics
    assert codes(whole) == [(2, "invalid_json")]
