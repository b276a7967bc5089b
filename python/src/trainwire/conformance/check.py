"""`trainwire conformance check`: the case files are complete, valid and up to date."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from jsonschema import Draft202012Validator

from trainwire.conformance.cases import (
    CASE_FILE,
    SCENARIO_FILE,
    STATE_FILE,
    STREAM_FILE,
    Case,
    load_cases,
)
from trainwire.conformance.diff import first_difference
from trainwire.conformance.generate import Generator
from trainwire.conformance.runner import comparable_state
from trainwire.conformance.schema_check import validator_for
from trainwire.conformance.streams import invariant_problems, parse_lines, reader_framing

_NEEDS = {"reader": (STREAM_FILE, STATE_FILE), "writer": (SCENARIO_FILE, STREAM_FILE, STATE_FILE)}


def _schema_errors(validator: object, value: object) -> list[str]:
    return [f"/{'/'.join(map(str, error.absolute_path))}: {error.message}" for error in validator.iter_errors(value)]  # type: ignore[attr-defined]


def check_cases(conformance: Path) -> list[str]:
    """Every problem found, as `<case id>: <problem>` lines; empty when all is well."""
    cases_dir = conformance / "cases"
    case_schema = Draft202012Validator(json.loads((conformance / "cases.schema.json").read_text(encoding="utf-8")))
    problems: list[str] = []
    try:
        cases = load_cases(cases_dir)
    except ValueError as error:
        return [f"{cases_dir}: a case.json is not JSON: {error}"]
    seen: set[str] = set()
    for case in cases:
        if case.id in seen:
            problems.append(f"{case.id}: id used twice")
        seen.add(case.id)
        problems.extend(f"{case.directory.name}: {problem}" for problem in _case_problems(case, case_schema, cases))
    problems.extend(_unlisted(conformance / "CHANGELOG.md", cases))
    if not problems:
        problems.extend(_drift(cases_dir, cases))
    return problems


def _unlisted(changelog: Path, cases: list[Case]) -> Iterator[str]:
    """Every case is named in the changelog, so a new case cannot go in unannounced."""
    text = changelog.read_text(encoding="utf-8") if changelog.is_file() else ""
    for case in cases:
        if f"`{case.id}`" not in text:
            yield f"{case.id}: not listed in {changelog.name} (list it under the next suite version)"


def _case_problems(case: Case, case_schema: Draft202012Validator, cases: list[Case]) -> Iterator[str]:
    if case.id != case.directory.name:
        yield f"id {case.id!r} differs from its folder name"
    yield from (f"{CASE_FILE} {error}" for error in _schema_errors(case_schema, case.meta))
    needed = {name for role in case.roles for name in _NEEDS.get(role, ())}
    missing = sorted(name for name in needed if not case.path(name).is_file())
    yield from (f"missing {name}" for name in missing)
    if missing:
        return
    if "writer" in case.roles and case.derive is not None:
        yield "a writer case plays its own scenario; it cannot be derived"
    if case.derive is not None and case.derive.get("base") not in {
        other.id for other in cases if other.path(SCENARIO_FILE).is_file()
    }:
        yield f"derive.base {case.derive.get('base')!r} is not a case with a {SCENARIO_FILE}"
    scenario = case.scenario()
    if scenario is not None:
        yield from (
            f"{SCENARIO_FILE} {error}" for error in _schema_errors(validator_for("harness-v1", "Scenario"), scenario)
        )
    yield from (
        f"{STATE_FILE} {error}"
        for error in _schema_errors(validator_for("harness-v1", "ReaderState"), case.expected_state())
    )
    stream = case.stream()
    if not case.invalid_lines:
        _, line_problems = parse_lines(reader_framing(stream))
        yield from (f"{STREAM_FILE} {problem.describe()}" for problem in line_problems)
    if "writer" in case.roles:
        yield from (f"{STREAM_FILE} invariant: {problem}" for problem in invariant_problems(stream))


def _drift(cases_dir: Path, cases: list[Case]) -> Iterator[str]:
    generator = Generator(cases_dir)
    for case in cases:
        for name, content in generator.files(case).items():
            if not _same(name, case.path(name).read_bytes(), content):
                yield f"{case.id}: {name} differs from what tools/gen_conformance.py writes (edited by hand, or not regenerated)"


def _same(name: str, committed: bytes, generated: bytes) -> bool:
    # Diagnostic messages are each reader's own wording, not the contract: rewording the
    # reference reader's messages does not make a golden stale.
    if name != STATE_FILE:
        return committed == generated
    try:
        return (
            first_difference(comparable_state(json.loads(generated)), comparable_state(json.loads(committed))) is None
        )
    except ValueError:
        return False
