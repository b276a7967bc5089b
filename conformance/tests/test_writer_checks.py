"""The writer side of the runner: a faithful writer passes, flawed ones fail at the right line."""

from __future__ import annotations

from conformance_support import BROKEN, conformance, outcomes, python_command, report_of

from trainwire.conformance.cases import load_cases
from trainwire.conformance.paths import cases_dir


def test_reference_writer_with_other_run_ids_passes_every_writer_case(root):
    completed = conformance("run", "--harness", python_command(BROKEN / "sloppy_writer.py", "good"), "--json")
    assert completed.returncode == 0, completed.stdout[-3000:]
    (harness,) = report_of(completed)["harnesses"]
    writer_cases = {case.id for case in load_cases(cases_dir()) if "writer" in case.roles}
    assert {case for (case, role), result in outcomes(harness).items() if result["outcome"] == "passed"} == writer_cases


def test_timestamps_in_the_wrong_format_fail_at_the_first_line():
    completed = conformance(
        "run", "--harness", python_command(BROKEN / "sloppy_writer.py", "millis"), "--case", "minimal-run"
    )
    assert completed.returncode == 1
    assert "FAILED   writer minimal-run" in completed.stdout
    # `validate` holds every writer to six fraction digits, before the golden comparison does.
    assert (
        "stream breaks an invariant: line 1: warning ts_fraction_digits" in completed.stdout
        and "[ts]" in completed.stdout
    )


def test_a_leaked_secret_is_the_first_difference():
    completed = conformance(
        "run", "--harness", python_command(BROKEN / "sloppy_writer.py", "unredacted"), "--case", "full-run", "--json"
    )
    assert completed.returncode == 1
    (harness,) = report_of(completed)["harnesses"]
    result = outcomes(harness)[("full-run", "writer")]
    assert result["outcome"] == "failed"
    assert result["difference"] == {"path": "$.config.hub_token", "expected": "<redacted>", "got": "hf_abc", "line": 1}
