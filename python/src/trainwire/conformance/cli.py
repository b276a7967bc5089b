"""`trainwire conformance run|check`."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from trainwire.cli.extras import MissingExtra, require_extra
from trainwire.conformance.cases import ROLES, load_cases
from trainwire.conformance.client import DEFAULT_TIMEOUT_S
from trainwire.conformance.normalise import Rules
from trainwire.conformance.paths import (
    HARNESS_LIST,
    SUITE_DIR,
    cases_dir,
    find_checkout,
    normalisation_file,
    suite_version,
)
from trainwire.conformance.report import Report


def listed_harnesses(checkout: Path) -> list[list[str]]:
    """The argv of every harness in `conformance/harnesses.json`, relative to the checkout."""
    listing: Any = json.loads((checkout / HARNESS_LIST).read_text(encoding="utf-8"))
    entries = listing.get("harnesses", []) if isinstance(listing, dict) else listing
    return [_argv(entry) for entry in entries]


def _argv(entry: Any) -> list[str]:
    if isinstance(entry, str):
        return shlex.split(entry)
    if isinstance(entry, list):
        return [str(part) for part in entry]
    argv = entry.get("argv", entry.get("command"))
    return shlex.split(argv) if isinstance(argv, str) else [str(part) for part in argv]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="trainwire conformance", description="The trainwire conformance suite.")
    parser.add_argument(
        "--suite",
        type=Path,
        default=SUITE_DIR,
        metavar="DIR",
        help="the suite directory (default: the suite shipped with this package)",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("run", help="run the cases against harnesses")
    which = run.add_mutually_exclusive_group(required=True)
    which.add_argument("--harness", action="append", metavar="CMD", help="a harness command line (repeatable)")
    which.add_argument(
        "--all", action="store_true", help="every first-party harness (conformance/harnesses.json of a source checkout)"
    )
    run.add_argument("--role", choices=ROLES, action="append", help="only this role (default: both)")
    run.add_argument("--case", nargs="+", action="extend", metavar="ID", help="only these cases")
    run.add_argument("--json", action="store_true", help="print the report as JSON")
    run.add_argument(
        "--junit", type=Path, metavar="FILE", help="also write the report as JUnit XML to FILE (for CI systems)"
    )
    run.add_argument("--seed", type=int, default=0, help="seed of the random splits (default 0)")
    run.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, help="seconds to wait for each answer")
    run.add_argument("--verbose", "-v", action="store_true", help="list passed cases too")

    commands.add_parser("check", help="check that the case files are complete, valid and up to date")
    return parser


def _run(args: argparse.Namespace, suite_dir: Path) -> int:
    from trainwire.conformance.runner import Suite, run_harness

    try:
        cases = load_cases(cases_dir(suite_dir), args.case)
    except KeyError as error:
        print(f"conformance: {error.args[0]}", file=sys.stderr)
        return 2
    # listed harnesses are paths in the checkout; a harness given by hand starts where the user is
    workdir = find_checkout() if args.all else Path.cwd()
    if workdir is None:
        print(
            f"conformance: --all needs a source checkout (no {HARNESS_LIST} here or above); use --harness CMD",
            file=sys.stderr,
        )
        return 2
    argvs = listed_harnesses(workdir) if args.all else [shlex.split(command) for command in args.harness]
    version = suite_version(suite_dir)
    suite = Suite(
        root=workdir,
        cases=cases,
        rules=Rules.load(normalisation_file(suite_dir)),
        seed=args.seed,
        timeout_s=args.timeout,
    )
    report = Report(
        [run_harness(argv, suite, tuple(args.role or ROLES), explicit_roles=bool(args.role)) for argv in argvs],
        suite_version=version,
    )
    if args.junit is not None:
        args.junit.write_text(report.to_junit(), encoding="utf-8")
    print(report.to_json() if args.json else report.to_text(verbose=args.verbose))
    return 0 if report.ok else 1


def _check(suite_dir: Path) -> int:
    from trainwire.conformance.check import check_cases

    problems = check_cases(suite_dir)
    for problem in problems:
        print(f"conformance check: {problem}", file=sys.stderr)
    if not problems:
        print(
            f"conformance check: suite {suite_version(suite_dir)}, {len(load_cases(cases_dir(suite_dir)))} cases complete, valid and up to date"
        )
    return 1 if problems else 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        require_extra("conformance")
    except MissingExtra as error:
        print(f"conformance: {error}", file=sys.stderr)
        return 1
    suite_dir = args.suite.resolve()
    if args.command == "run":
        return _run(args, suite_dir)
    return _check(suite_dir)
