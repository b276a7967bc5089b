"""Deliberately broken readers fail the suite, and the report points at the first difference."""

from __future__ import annotations

from conformance_support import BROKEN, conformance, outcomes, python_command, report_of

from trainwire.conformance.paths import suite_version


def test_torn_tail_reported_as_error_fails_with_readable_report():
    completed = conformance("run", "--harness", python_command(BROKEN / "torn_tail_as_error.py"))
    assert completed.returncode == 1
    text = completed.stdout
    assert "FAILED   reader torn-last-line" in text
    assert "chunks: whole" in text  # the first split tried already shows it
    assert 'first difference: $.diagnostics[0]: expected <missing>, got {"code": "invalid_json", "line": 23}' in text
    assert "  + diagnostic line 23 invalid_json (given, not expected)" in text
    assert "  line 23" not in text  # the other paths of the state agree: only diagnostics are shown
    summary = text.rstrip().splitlines()[-1]
    assert (
        summary.startswith(f"conformance: FAILED (suite {suite_version()}, 1 harness(es): ") and "1 failed" in summary
    )


def test_junit_report_names_each_case_and_its_failure(tmp_path):
    from xml.etree import ElementTree

    junit = tmp_path / "report.xml"
    completed = conformance(
        "run",
        "--harness",
        python_command(BROKEN / "torn_tail_as_error.py"),
        "--case",
        "torn-last-line",
        "minimal-run",
        "--junit",
        str(junit),
    )
    assert completed.returncode == 1
    (suite,) = ElementTree.parse(junit).getroot()
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("2", "1", "0")
    failed = {case.get("name"): case.find("failure") for case in suite}
    assert failed["minimal-run"] is None
    assert failed["torn-last-line"].get("message") == "state differs from expected-state.json"
    assert "diagnostic line 23 invalid_json" in failed["torn-last-line"].text


def test_torn_tail_reader_fails_only_the_torn_case():
    completed = conformance("run", "--harness", python_command(BROKEN / "torn_tail_as_error.py"), "--json")
    (harness,) = report_of(completed)["harnesses"]
    failed = {case for (case, _), result in outcomes(harness).items() if result["outcome"] != "passed"}
    assert failed == {"torn-last-line"}


def test_coercing_reader_fails_the_garbage_case_at_the_coerced_line():
    completed = conformance(
        "run", "--harness", python_command(BROKEN / "coerce_strings.py"), "--case", "garbage-between-lines", "--json"
    )
    assert completed.returncode == 1
    (harness,) = report_of(completed)["harnesses"]
    result = outcomes(harness)[("garbage-between-lines", "reader")]
    assert result["outcome"] == "failed"
    # Line 12 (`"seq":"5"`) is a schema violation; the coercing reader applied it, so its
    # diagnostics skip from line 11 to line 13.
    assert result["difference"] == {"path": "$.diagnostics[7].line", "expected": 12, "got": 13}
