"""Running the cases against one harness: readers get chunked streams, writers get scenarios."""

from __future__ import annotations

import base64
import copy
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any

from trainwire.conformance.cases import ROLES, Case, Role
from trainwire.conformance.client import DEFAULT_TIMEOUT_S, Harness, HarnessBroken, ProtocolViolation
from trainwire.conformance.contract_versions import FIRST_CONTRACT, released_state_fields
from trainwire.conformance.diff import Difference, differences, first_difference
from trainwire.conformance.normalise import Rules
from trainwire.conformance.plans import plans_for
from trainwire.conformance.report import CaseResult, HarnessReport
from trainwire.conformance.streams import invariant_problems, parse_lines


@dataclass(frozen=True)
class Suite:
    """What to run: the cases, the normalisation rules, the seed of the random splits."""

    root: Path
    cases: list[Case]
    rules: Rules
    seed: int = 0
    timeout_s: float = DEFAULT_TIMEOUT_S


def comparable_state(state: Any) -> Any:
    """The state without diagnostic messages: their wording is each reader's own."""
    state = copy.deepcopy(state)
    if isinstance(state, dict):
        for diagnostic in state.get("diagnostics") or []:
            if isinstance(diagnostic, dict):
                diagnostic.pop("message", None)
    return state


def state_report(expected: Any, got: Any, chunks: list[bytes]) -> str:
    """What differs, readably: diagnostics by content, then every other differing path,
    and for a wrong cut between lines and tail the bytes around the right one."""
    lines = ["state differs from expected-state.json"]
    lines.extend(
        diagnostics_diff(
            expected.get("diagnostics") or [], got.get("diagnostics") or [] if isinstance(got, dict) else []
        )
    )
    rest = {key: value for key, value in expected.items() if key != "diagnostics"}
    others = {key: value for key, value in got.items() if key != "diagnostics"} if isinstance(got, dict) else got
    lines.extend(f"  {difference.describe()}" for difference in islice(differences(rest, others), 10))
    if isinstance(got, dict) and got.get("consumed_bytes") != expected.get("consumed_bytes"):
        lines.append(f"  bytes around the expected cut: {cut_excerpt(b''.join(chunks), expected['consumed_bytes'])}")
    return "\n".join(lines)


def diagnostics_diff(expected: list[Any], got: list[Any]) -> list[str]:
    """Diagnostics compared by content (line, code), not by position."""

    def key(item: Any) -> tuple[Any, Any]:
        return (item.get("line"), item.get("code")) if isinstance(item, dict) else (None, repr(item))

    want, have = Counter(map(key, expected)), Counter(map(key, got))
    missing, extra = sorted((want - have).elements(), key=str), sorted((have - want).elements(), key=str)
    return [f"  - diagnostic line {line} {code} (expected, missing)" for line, code in missing] + [
        f"  + diagnostic line {line} {code} (given, not expected)" for line, code in extra
    ]


def cut_excerpt(data: bytes, cut: int, width: int = 24) -> str:
    """The bytes either side of offset `cut`, with the cut marked."""
    return f"{data[max(0, cut - width) : cut]!r} | {data[cut : cut + width]!r} (offset {cut})"


def _answer(case: Case, role: Role, response: dict[str, Any]) -> CaseResult | None:
    """A result for a skipped or errored response; None for a real answer."""
    if response.get("skipped"):
        return CaseResult(case.id, role, "skipped", response.get("message", "skipped by the harness"))
    if response.get("errored"):
        context = response.get("context") or {}
        return CaseResult(
            case.id, role, "errored", f"the harness reported an error: {context.get('message', '(no message)')}"
        )
    return None


def check_reader(harness: Harness, case: Case, seed: int) -> CaseResult:
    """Sends the case's stream whole and split in many ways; each state must equal the golden."""
    if case.max_line_bytes is not None:
        return CaseResult(case.id, "reader", "skipped", "needs max_line_bytes, which the harness protocol cannot pass")
    data = case.stream()
    suite = case.directory.parent.parent

    def comparable(state: Any) -> Any:
        state = comparable_state(state)
        return released_state_fields(state, suite) if case.contract == FIRST_CONTRACT else state

    expected = comparable(case.expected_state())
    liveness = {
        key: value for key, value in (("now", case.now), ("stale_after_s", case.stale_after_s)) if value is not None
    }
    for plan in plans_for(data, seed):
        chunks = [base64.b64encode(chunk).decode("ascii") for chunk in plan.chunks(data)]
        response = harness.request("read", chunks=chunks, **liveness)
        answered = _answer(case, "reader", response)
        if answered is not None:
            answered.plan = plan.name
            return answered
        got = comparable(response["state"])
        if first_difference(expected, got) is not None:
            return CaseResult(
                case.id,
                "reader",
                "failed",
                state_report(expected, got, plan.chunks(data)),
                plan.name,
                first_difference(expected, got),
                contract=case.contract,
            )
    return CaseResult(case.id, "reader", "passed", contract=case.contract)


def check_writer(harness: Harness, case: Case, rules: Rules) -> CaseResult:
    """Plays the case's scenario; the stream must be valid, keep the invariants and match the golden."""
    scenario = case.scenario()
    if scenario is None:
        return CaseResult(case.id, "writer", "errored", "the case has no scenario.json")
    response = harness.request("write", scenario=scenario)
    answered = _answer(case, "writer", response)
    if answered is not None:
        return answered
    try:
        stream = base64.b64decode(response["stream"], validate=True)
    except ValueError as error:
        return CaseResult(case.id, "writer", "errored", f"stream is not base64: {error}")
    got, problems = parse_lines(stream)
    if problems:
        return CaseResult(case.id, "writer", "failed", "a line breaks the contract", difference=problems[0])
    broken = invariant_problems(stream)
    if broken:
        return CaseResult(case.id, "writer", "failed", f"stream breaks an invariant: {broken[0]}")
    expected, _ = parse_lines(case.stream())
    difference = compare_streams(expected, got, rules)
    if difference is not None:
        return CaseResult(
            case.id, "writer", "failed", "stream differs from stream.ndjson after normalisation", difference=difference
        )
    return CaseResult(case.id, "writer", "passed")


def compare_streams(expected: list[Any], got: list[Any], rules: Rules) -> Difference | None:
    """The first difference between two parsed streams after normalisation, with its line number."""
    left, right = rules.apply(expected), rules.apply(got)
    if right.problems:
        return right.problems[0]
    for number in range(1, max(len(left.lines), len(right.lines)) + 1):
        if number > len(right.lines):
            return Difference("$", left.lines[number - 1], None, number, "the stream ends too early")
        if number > len(left.lines):
            return Difference("$", None, right.lines[number - 1], number, "a line more than the golden")
        found = first_difference(left.lines[number - 1], right.lines[number - 1], tolerance=rules.tolerance)
        if found is not None:
            return Difference(found.path, found.expected, found.got, number)
    return None


_CHECKS = {
    "reader": lambda harness, case, suite: check_reader(harness, case, suite.seed),
    "writer": lambda harness, case, suite: check_writer(harness, case, suite.rules),
}


def run_harness(
    argv: Sequence[str], suite: Suite, roles: Sequence[Role] = ROLES, *, explicit_roles: bool = False
) -> HarnessReport:
    """Every case of `suite` in every role in `roles` that both the case and the harness have.

    A role the harness lacks is left out, or, when asked for explicitly, reported skipped.
    """
    report = HarnessReport(argv=list(argv))
    harness = Harness(argv, cwd=suite.root, timeout_s=suite.timeout_s)
    try:
        harness.start()
    except HarnessBroken as error:
        harness.kill()
        report.error = f"the harness did not start: {error}"
        return report
    report.implementation, report.roles = harness.implementation, harness.roles
    try:
        for role in roles:
            for case in suite.cases:
                if role not in case.roles:
                    continue
                if role not in harness.roles:
                    if explicit_roles:
                        report.results.append(CaseResult(case.id, role, "skipped", f"the harness has no {role} role"))
                    continue
                report.results.append(_run_one(harness, case, role, suite, report))
                if report.error:
                    return report
    finally:
        harness.stop()
    return report


def _run_one(harness: Harness, case: Case, role: Role, suite: Suite, report: HarnessReport) -> CaseResult:
    try:
        return _CHECKS[role](harness, case, suite)
    except ProtocolViolation as error:
        return CaseResult(case.id, role, "errored", f"protocol violation: {error}")
    except HarnessBroken as error:
        harness.kill()  # first, so that its stderr ends and the excerpt holds all it said
        stderr = harness.stderr_excerpt()
        try:
            harness.start()
            report.restarts.append(f"{case.id} ({role}): {error}; restarted")
        except HarnessBroken as again:
            report.error = f"could not restart the harness after {case.id} ({role}): {again}"
        return CaseResult(case.id, role, "errored", "\n".join(filter(None, [str(error), stderr])))
