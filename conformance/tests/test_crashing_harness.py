"""A harness that crashes, speaks garbage or hangs is restarted; its case counts as errored."""

from __future__ import annotations

import pytest
from conformance_support import BROKEN, conformance, outcomes, python_command, report_of

CASES = ("minimal-run", "crlf-bom-blank-lines", "stop-sigterm")


@pytest.mark.parametrize(
    ("mode", "symptom"),
    [
        ("exit", "exit code 3: the harness exited"),
        ("garbage", "non-JSON output:"),
        ("hang", "timeout: no answer within 1 s"),
    ],
)
def test_broken_harness_is_restarted_and_its_case_errored(mode, symptom):
    command = python_command(BROKEN / "crashing.py", mode)
    completed = conformance("run", "--harness", command, "--case", *CASES, "--timeout", "1", "--json")
    assert completed.returncode == 1
    (harness,) = report_of(completed)["harnesses"]
    results = outcomes(harness)
    crashed = results[("crlf-bom-blank-lines", "reader")]
    assert crashed["outcome"] == "errored"
    assert crashed["message"].startswith(symptom.split(":")[0]) and symptom in crashed["message"]
    assert "stderr ends:\n  | crashing: a byte order mark, giving up" in crashed["message"]
    # Restarted once, and the cases after the crash still ran against the new process.
    assert len(harness["restarts"]) == 1 and harness["restarts"][0].startswith("crlf-bom-blank-lines (reader)")
    assert results[("stop-sigterm", "reader")]["outcome"] == "passed"
    assert results[("minimal-run", "reader")]["outcome"] == "passed"


def test_text_report_says_the_harness_was_restarted():
    completed = conformance(
        "run", "--harness", python_command(BROKEN / "crashing.py", "exit"), "--case", "crlf-bom-blank-lines"
    )
    assert completed.returncode == 1
    assert (
        "restarted: crlf-bom-blank-lines (reader): exit code 3: the harness exited without answering"
        in completed.stdout
    )
    assert "ERRORED  reader crlf-bom-blank-lines" in completed.stdout


def test_harness_that_cannot_start_is_an_error(tmp_path):
    completed = conformance("run", "--harness", str(tmp_path / "no-such-harness"), "--case", "minimal-run", "--json")
    assert completed.returncode == 1
    (harness,) = report_of(completed)["harnesses"]
    assert harness["error"].startswith("the harness did not start")
