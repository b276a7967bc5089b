"""Deliberately broken readers fail the suite, and the report points at the first difference."""

from __future__ import annotations

from conformance_support import BROKEN, conformance, outcomes, python_command, report_of


def test_torn_tail_reported_as_error_fails_with_readable_report():
    completed = conformance("run", "--harness", python_command(BROKEN / "torn_tail_as_error.py"))
    assert completed.returncode == 1
    text = completed.stdout
    assert "FAILED   reader torn-last-line" in text
    assert "chunks: whole" in text  # the first split tried already shows it
    assert 'first difference: $.diagnostics[0]: expected <missing>, got {"code": "invalid_json", "line": 23}' in text
    assert text.rstrip().endswith("conformance: FAILED")


def test_torn_tail_reader_fails_only_the_torn_case():
    completed = conformance("run", "--harness", python_command(BROKEN / "torn_tail_as_error.py"), "--json")
    (harness,) = report_of(completed)["harnesses"]
    failed = {case for (case, _), result in outcomes(harness).items() if result["outcome"] != "passed"}
    assert failed == {"torn-last-line"}


def test_coercing_reader_fails_the_garbage_case_at_the_coerced_line():
    completed = conformance("run", "--harness", python_command(BROKEN / "coerce_strings.py"), "--case", "garbage-between-lines", "--json")
    assert completed.returncode == 1
    (harness,) = report_of(completed)["harnesses"]
    result = outcomes(harness)[("garbage-between-lines", "reader")]
    assert result["outcome"] == "failed"
    # Line 12 (`"seq":"5"`) is a schema violation; the coercing reader applied it, so its
    # diagnostics skip from line 11 to line 13.
    assert result["difference"] == {"path": "$.diagnostics[7].line", "expected": 12, "got": 13}
