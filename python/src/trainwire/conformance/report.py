"""Results of a run of the suite, as text for people and as JSON for tools."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal
from xml.etree import ElementTree

from trainwire.conformance.diff import Difference, json_text

Outcome = Literal["passed", "failed", "skipped", "errored"]
OUTCOMES: tuple[Outcome, ...] = ("passed", "failed", "skipped", "errored")


@dataclass
class CaseResult:
    """The outcome of one case in one role for one harness."""

    case: str
    role: str
    outcome: Outcome
    message: str = ""
    plan: str | None = None
    difference: Difference | None = None
    #: the contract version the case needs (`1.1`: a reader of 1.0 fails it as expected)
    contract: str = "1.0"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "case": self.case,
            "role": self.role,
            "outcome": self.outcome,
            "contract": self.contract,
        }
        if self.message:
            data["message"] = self.message
        if self.plan:
            data["plan"] = self.plan
        if self.difference is not None:
            data["difference"] = self.difference.to_json()
        return data

    def describe(self) -> str:
        head = f"{self.outcome.upper():8} {self.role:6} {self.case}"
        if self.contract != "1.0":
            head += f" (needs contract {self.contract})"
        if self.outcome == "skipped":
            return f"{head}: {self.message}"
        details = []
        if self.plan:
            details.append(f"chunks: {self.plan}")
        if self.message:
            details.extend(self.message.splitlines())
        if self.difference is not None:
            details.append(f"first difference: {self.difference.describe()}")
        return "\n".join([head, *(f"         {line}" for line in details)])


@dataclass
class HarnessReport:
    """Everything one harness did: its introduction, results and restarts."""

    argv: list[str]
    implementation: dict[str, Any] = field(default_factory=dict)
    roles: list[str] = field(default_factory=list)
    results: list[CaseResult] = field(default_factory=list)
    restarts: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and all(result.outcome in ("passed", "skipped") for result in self.results)

    def counts(self) -> dict[str, int]:
        counted = Counter(result.outcome for result in self.results)
        return {outcome: counted[outcome] for outcome in OUTCOMES}

    @property
    def name(self) -> str:
        impl = self.implementation
        return (
            f"{impl['name']} {impl.get('version', '')} ({impl.get('language', '?')})" if impl else " ".join(self.argv)
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "argv": self.argv,
            "implementation": self.implementation,
            "roles": self.roles,
            "ok": self.ok,
            "counts": self.counts(),
            "restarts": self.restarts,
            "error": self.error,
            "results": [result.to_json() for result in self.results],
        }

    def to_text(self, *, verbose: bool = False) -> str:
        roles = self.implementation and f" [{', '.join(self.roles)}]"
        lines = [f"harness: {self.name}{roles or ''}"]
        if self.error:
            lines.append(f"  ERROR: {self.error}")
        for note in self.restarts:
            lines.append(f"  restarted: {note}")
        for result in self.results:
            if verbose or result.outcome != "passed":
                lines.extend(f"  {line}" for line in result.describe().splitlines())
        summary = ", ".join(f"{count} {outcome}" for outcome, count in self.counts().items())
        newer = sorted({r.contract for r in self.results if r.outcome == "failed" and r.contract != "1.0"})
        if newer:
            failed = sum(1 for r in self.results if r.outcome == "failed" and r.contract != "1.0")
            summary += f" ({failed} of the failed cases need contract {', '.join(newer)})"
        lines.append(f"  {summary}")
        return "\n".join(lines)


@dataclass
class Report:
    harnesses: list[HarnessReport] = field(default_factory=list)
    suite_version: str = ""

    @property
    def ok(self) -> bool:
        return all(harness.ok for harness in self.harnesses)

    def counts(self) -> dict[str, int]:
        total: Counter[str] = Counter()
        for harness in self.harnesses:
            total.update(harness.counts())
        return {outcome: total[outcome] for outcome in OUTCOMES}

    def summary(self) -> str:
        """One line for the end of a log: verdict, suite version, harnesses, counts."""
        counts = ", ".join(f"{count} {outcome}" for outcome, count in self.counts().items())
        suite = f"suite {self.suite_version}, " if self.suite_version else ""
        return f"conformance: {'OK' if self.ok else 'FAILED'} ({suite}{len(self.harnesses)} harness(es): {counts})"

    def to_json(self) -> str:
        data = {
            "ok": self.ok,
            "suite_version": self.suite_version,
            "summary": self.summary(),
            "harnesses": [h.to_json() for h in self.harnesses],
        }
        return json_text(data, indent=2)

    def to_text(self, *, verbose: bool = False) -> str:
        blocks = [
            f"conformance suite {self.suite_version}",
            *(harness.to_text(verbose=verbose) for harness in self.harnesses),
        ]
        blocks.append(self.summary())
        return "\n\n".join(blocks)

    def to_junit(self) -> str:
        """JUnit XML: one test suite per harness, one test case per case and role."""
        root = ElementTree.Element("testsuites", name=f"trainwire conformance suite {self.suite_version}")
        for harness in self.harnesses:
            counts = harness.counts()
            suite = ElementTree.SubElement(
                root,
                "testsuite",
                name=harness.name,
                tests=str(len(harness.results)),
                failures=str(counts["failed"]),
                errors=str(counts["errored"]),
                skipped=str(counts["skipped"]),
            )
            if harness.error:
                ElementTree.SubElement(suite, "error", message=harness.error)
            for result in harness.results:
                case = ElementTree.SubElement(
                    suite, "testcase", classname=f"{harness.name}.{result.role}", name=result.case
                )
                tag = {"failed": "failure", "errored": "error", "skipped": "skipped"}.get(result.outcome)
                if tag is not None:
                    detail = ElementTree.SubElement(
                        case, tag, message=result.message.splitlines()[0] if result.message else result.outcome
                    )
                    detail.text = result.describe()
        ElementTree.indent(root)
        return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(root, encoding="unicode") + "\n"
