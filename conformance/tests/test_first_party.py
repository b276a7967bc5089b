"""`trainwire conformance run --all`: every first-party harness passes every case."""

from __future__ import annotations

from conformance_support import conformance, report_of

from trainwire.conformance.cases import load_cases
from trainwire.conformance.cli import listed_harnesses
from trainwire.conformance.paths import cases_dir


def test_run_all_passes_every_case_for_every_listed_harness(root):
    completed = conformance("run", "--all", "--json")
    report = report_of(completed)
    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-2000:]
    assert len(report["harnesses"]) == len(listed_harnesses(root)) >= 1
    cases = load_cases(cases_dir())
    for harness in report["harnesses"]:
        assert harness["error"] is None and harness["restarts"] == []
        expected = {(case.id, role) for case in cases for role in case.roles if role in harness["roles"]}
        got = {(result["case"], result["role"]) for result in harness["results"] if result["outcome"] == "passed"}
        assert got == expected, harness["implementation"]


def test_text_report_summarises_each_harness(root):
    completed = conformance("run", "--all", "--case", "minimal-run")
    assert completed.returncode == 0, completed.stdout
    assert completed.stdout.count("harness: ") == len(listed_harnesses(root))
    assert "0 failed" in completed.stdout and completed.stdout.rstrip().splitlines()[-1].startswith(
        "conformance: OK (suite "
    )
