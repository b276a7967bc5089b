"""The guide's minimal reader harness passes the cases it claims and reports its skips."""

from __future__ import annotations

from conformance_support import EXAMPLE, conformance, outcomes, python_command, report_of

from trainwire.conformance.cases import load_cases
from trainwire.conformance.paths import cases_dir

# Streams with invalid lines, blank lines, a BOM, seq irregularities or unknown events,
# and liveness requests: what the example says it cannot judge.
CLAIMED_SKIPS = {
    "alive-within-heartbeats",
    "crash-stale-heartbeat",
    "crash-stale-timeout",
    "crlf-bom-blank-lines",
    "event-name-not-a-string",
    "garbage-between-lines",
    "line-after-finished",
    "line-over-limit",
    "schema-version-2",
    "seq-gap",
    "seq-repeated",
    "unknown-event-and-fields",
    # suite 2: every new case holds a line the example cannot judge (it does not validate)
    "bom-line-at-limit",
    "bom-mid-stream",
    "deep-nesting",
    "duplicate-keys",
    "integer-spellings",
    "nul-and-lone-surrogates",
    "odd-whitespace-lines",
    "overflowing-numbers",
    "spaces-over-limit",
    "ts-profile",
    # suite 3
    "overflowing-integers",
    # suite 4: contract 1.1 cases whose events the example does not know
    "eval-items",
    "rollback-to-checkpoint",
}
# The example is a reader of contract 1.0: it reads the 1.1 cases whose new fields it ignores
# without an error, and fails them, reported as cases that need 1.1.
# suite 5: the last two
FAILED_NEEDING_1_1 = {
    "cycles",
    "stop-for-criterion",
    "sweep-restart-in-trial",
    "trial-epochs-and-evaluations",
    "open-at-finish",
    "run-process-and-integer-params",
}


def test_example_is_short_and_stands_alone():
    source = EXAMPLE.read_text(encoding="utf-8")
    assert len(source.splitlines()) < 60
    assert "trainwire" not in "".join(line for line in source.splitlines() if line.startswith(("import", "from")))


def test_example_passes_what_it_claims_and_reports_skips(root):
    completed = conformance("run", "--harness", python_command(EXAMPLE), "--json")
    assert completed.returncode == 1, completed.stdout[-3000:] + completed.stderr[-2000:]
    (harness,) = report_of(completed)["harnesses"]
    assert harness["roles"] == ["reader"]
    results = outcomes(harness)
    reader_cases = {case.id for case in load_cases(cases_dir()) if "reader" in case.roles}
    assert {case for case, _ in results} == reader_cases
    skipped = {case for (case, _), result in results.items() if result["outcome"] == "skipped"}
    assert skipped == CLAIMED_SKIPS
    assert all("only clean streams" in results[(case, "reader")]["message"] for case in skipped)
    failed = {case for (case, _), result in results.items() if result["outcome"] == "failed"}
    assert failed == FAILED_NEEDING_1_1
    assert {results[(case, "reader")]["contract"] for case in failed} == {"1.1"}
    passed = {case for (case, _), result in results.items() if result["outcome"] == "passed"}
    assert passed == reader_cases - CLAIMED_SKIPS - FAILED_NEEDING_1_1
    # every case of contract 1.0 it does not skip, it passes
    assert {case.id for case in load_cases(cases_dir()) if case.contract == "1.0"} - CLAIMED_SKIPS <= passed


def test_a_reader_of_1_0_failing_1_1_cases_is_told_so():
    completed = conformance("run", "--harness", python_command(EXAMPLE), "--case", "minimal-run", "cycles")
    assert completed.returncode == 1
    assert "FAILED   reader cycles (needs contract 1.1)" in completed.stdout
    assert "1 passed, 1 failed, 0 skipped, 0 errored (1 of the failed cases need contract 1.1)" in completed.stdout


def test_text_report_shows_skips_with_their_reason():
    completed = conformance("run", "--harness", python_command(EXAMPLE), "--case", "seq-gap", "minimal-run")
    assert completed.returncode == 0
    assert "SKIPPED  reader seq-gap: only clean streams of known events, without liveness" in completed.stdout
    assert "1 passed, 0 failed, 1 skipped, 0 errored" in completed.stdout
