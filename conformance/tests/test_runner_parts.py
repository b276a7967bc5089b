"""The runner's parts in-process: chunk plans, the diff, normalisation, transformations."""

from __future__ import annotations

import json

import pytest

from trainwire.conformance.cases import load_cases
from trainwire.conformance.contract_versions import released_state_fields
from trainwire.conformance.diff import first_difference
from trainwire.conformance.normalise import Rules
from trainwire.conformance.paths import SUITE_DIR, cases_dir, normalisation_file
from trainwire.conformance.plans import plans_for
from trainwire.conformance.runner import compare_streams
from trainwire.conformance.transforms import derive

STREAM = 'a\n{"x":"é🚀"}\nlast'.encode()


def test_every_plan_rebuilds_the_stream_and_the_named_ones_cut_where_they_say():
    plans = {plan.name: plan for plan in plans_for(STREAM, seed=7)}
    assert set(plans) == {
        "whole",
        "line-by-line",
        "inside-characters",
        "byte-by-byte",
        "random-1",
        "random-2",
        "random-3",
    }
    for plan in plans.values():
        assert b"".join(plan.chunks(STREAM)) == STREAM
    assert plans["line-by-line"].chunks(STREAM) == [b"a\n", '{"x":"é🚀"}\n'.encode(), b"last"]
    for chunk in plans["inside-characters"].chunks(STREAM)[1:]:
        with pytest.raises(UnicodeDecodeError):
            chunk.decode("utf-8")  # every later chunk starts inside a character
    assert all(len(chunk) == 1 for chunk in plans["byte-by-byte"].chunks(STREAM))


def test_random_plans_follow_the_seed():
    def cuts(seed: int) -> list:
        return [plan.cuts for plan in plans_for(STREAM, seed)]

    assert cuts(1) == cuts(1) and cuts(1) != cuts(2)


def test_large_streams_are_not_sent_byte_by_byte():
    assert "byte-by-byte" not in {plan.name for plan in plans_for(b"x\n" * 5000, seed=0)}


def test_first_difference_names_the_path_and_both_values():
    expected = {"runs": [{"status": "running", "step": 5}], "lines": 3}
    got = {"runs": [{"status": "running", "step": 5.0}], "lines": 3}
    assert first_difference(expected, got) is None  # JSON numbers: 5 and 5.0 are one value
    found = first_difference(expected, {"runs": [{"status": "stale", "step": 5}], "lines": 4})
    assert (found.path, found.expected, found.got) == ("$.runs[0].status", "running", "stale")
    assert found.describe() == '$.runs[0].status: expected "running", got "stale"'


@pytest.mark.parametrize(
    ("expected", "got"), [(True, 1), (1, True), (0, False), (None, 0), ("5", 5), ([1], [1, 2]), ({}, {"a": 1})]
)
def test_first_difference_has_no_coercion(expected, got):
    assert first_difference(expected, got) is not None


def test_tolerance_applies_to_floats_only():
    assert first_difference(0.1 + 0.2, 0.3, tolerance=1e-9) is None
    assert first_difference(0.1 + 0.2, 0.3) is not None
    assert first_difference(2**53 - 1, 2**53 - 2, tolerance=1e-9) is not None


def _line(seq: int, ts: str, run_id: str = "mine", **fields: object) -> dict:
    return {"schema_version": 1, "seq": seq, "ts": ts, "run_id": run_id, "event": "run.heartbeat", **fields}


def test_normalisation_renames_runs_and_hides_timestamps(root):
    rules = Rules.load(normalisation_file())
    golden = [
        _line(1, "2026-11-29T10:00:00.000000Z", "a"),
        _line(1, "2026-11-29T10:00:00.000000Z", "b", resumed_from={"run_id": "a"}),
    ]
    mine = [
        _line(1, "2030-01-01T00:00:00.500000Z", "x"),
        _line(1, "2030-01-01T00:00:09.000000Z", "y", resumed_from={"run_id": "x"}),
    ]
    assert compare_streams(golden, mine, rules) is None
    swapped = [mine[0], _line(1, "2030-01-01T00:00:09.000000Z", "x")]
    found = compare_streams(golden, swapped, rules)
    assert (found.line, found.path, found.expected, found.got) == (2, "$.run_id", "run-2", "run-1")


@pytest.mark.parametrize(
    ("timestamps", "note"),
    [
        (["2026-11-29T10:00:01.000000Z", "2026-11-29T10:00:00.000000Z"], "time went back within the run"),
        (["2026-11-29T10:00:00.000000Z", "2026-11-29 10:00:01.000000Z"], "timestamp format"),
        (["2026-11-29T10:00:00.000000Z", "2026-11-29T10:00:01.000Z"], "timestamp format"),
    ],
)
def test_normalisation_checks_timestamps_before_hiding_them(root, timestamps, note):
    rules = Rules.load(normalisation_file())
    golden = [_line(1, "2026-11-29T10:00:00.000000Z"), _line(2, "2026-11-29T10:00:00.000000Z")]
    found = compare_streams(golden, [_line(1, timestamps[0]), _line(2, timestamps[1])], rules)
    assert (found.line, found.note) == (2, note)


def test_normalisation_ignores_producer_version_and_provenance_only(root):
    rules = Rules.load(normalisation_file())
    ts = "2026-11-29T10:00:00.000000Z"
    golden = [_line(1, ts, producer={"name": "w", "version": "1"}, provenance={"git_sha": "a"})]
    assert compare_streams(golden, [_line(1, ts, producer={"name": "w", "version": "9"})], rules) is None
    found = compare_streams(golden, [_line(1, ts, producer={"name": "other", "version": "1"})], rules)
    assert found.path == "$.producer.name"
    found = compare_streams(golden, [], rules)
    assert (found.line, found.note) == (1, "the stream ends too early")


BASE = b"".join(json.dumps({"n": n}).encode() + b"\n" for n in range(1, 5))


@pytest.mark.parametrize(
    ("transforms", "expected"),
    [
        ([{"op": "tear", "keep_bytes": 3}], b'{"n": 1}\n{"n": 2}\n{"n": 3}\n{"n'),
        ([{"op": "drop", "lines": [2, 3]}], b'{"n": 1}\n{"n": 4}\n'),
        ([{"op": "duplicate", "line": 1, "after_line": 4}], b'{"n": 1}\n{"n": 2}\n{"n": 3}\n{"n": 4}\n{"n": 1}\n'),
        (
            [{"op": "insert", "after_line": 0, "lines": ["", {"json": {"é": 1}}, {"hex": "ff"}]}],
            b'\n{"\xc3\xa9":1}\n\xff\n' + BASE,
        ),
        ([{"op": "edit", "line": 2, "set": {"n": "2"}, "delete": []}], BASE.replace(b'{"n": 2}', b'{"n":"2"}')),
        ([{"op": "drop", "lines": [3, 4]}, {"op": "crlf"}, {"op": "bom"}], b'\xef\xbb\xbf{"n": 1}\r\n{"n": 2}\r\n'),
    ],
)
def test_transformations(transforms, expected):
    assert derive(BASE, transforms, source=lambda case_id: b"") == expected


def test_interleave_and_long_lines():
    other = b"x1\nx2\nx3\nx4\nx5\n"
    merged = derive(b"a\nb\n", [{"op": "interleave", "with": "other"}], source=lambda case_id: other)
    assert merged == b"a\nx1\nb\nx2\nx3\nx4\nx5\n"
    long = derive(
        b"a\n", [{"op": "long_line", "after_line": 0, "bytes": 100, "json": {"k": 1}}], source=lambda case_id: b""
    )
    first, rest = long.split(b"\n", 1)
    assert len(first) == 100 and json.loads(first)["k"] == 1 and rest == b"a\n"


def test_state_report_lists_diagnostics_by_content_every_differing_path_and_the_cut():
    from trainwire.conformance.runner import state_report

    expected = {
        "consumed_bytes": 6,
        "lines": 2,
        "diagnostics": [{"line": 1, "code": "invalid_json"}, {"line": 2, "code": "seq_gap"}],
    }
    got = {
        "consumed_bytes": 9,
        "lines": 3,
        "diagnostics": [{"line": 2, "code": "seq_gap"}, {"line": 3, "code": "invalid_json"}],
    }
    text = state_report(expected, got, [b"{x}\n", b"a\nbc\nd"])
    assert text.splitlines() == [
        "state differs from expected-state.json",
        "  - diagnostic line 1 invalid_json (expected, missing)",
        "  + diagnostic line 3 invalid_json (given, not expected)",
        "  $.consumed_bytes: expected 6, got 9",
        "  $.lines: expected 2, got 3",
        "  bytes around the expected cut: b'{x}\\na\\n' | b'bc\\nd' (offset 6)",
    ]


def test_a_1_0_case_is_compared_on_the_released_reader_state_fields():
    (case,) = load_cases(cases_dir(), ["hyperparameter-search"])
    state = case.expected_state()
    (run,) = released_state_fields(state, SUITE_DIR)["runs"]
    # the 1.1 fields are gone at every depth, the 1.0 ones kept as they are
    assert not {"phase_progress", "cycle", "rollbacks", "stop_criterion"} & set(run)
    assert set(run["trials"]) == {"count", "best"} and run["trials"]["count"] == state["runs"][0]["trials"]["count"]
    assert set(run["trials"]["best"] or {}) <= {"trial", "metric", "value"}
    assert {key: value for key, value in state.items() if key != "runs"} == {
        key: value for key, value in released_state_fields(state, SUITE_DIR).items() if key != "runs"
    }
