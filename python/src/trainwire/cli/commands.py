"""The `trainwire` command: tail, state, validate, stop, plot, schema, export, demo, conformance.

Errors are one line on stderr and a non-zero exit (2 for a usage error), never a traceback.
Each command imports what it runs inside its function (the reader's models, the stop
control, the plot): those are slow to import, and every invocation builds this parser.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import NoReturn

from trainwire._generated.contract import (
    NOT_FINISHED_EXIT_CODE,
    SCHEMA_FAMILIES,
    STOP_PENDING_EXIT_CODE,
    TAIL_EXIT_CODES_TEXT,
)
from trainwire._version import __version__
from trainwire.cli import runs as journal_commands
from trainwire.cli import serve as serve_command
from trainwire.cli.arguments import positive_seconds, rfc3339_time
from trainwire.cli.errors import CommandError
from trainwire.cli.export import add_export_commands
from trainwire.contract.layout import STREAM_FILE
from trainwire.extras import MissingExtra, missing_extra

__all__ = ["main"]

USAGE_EXIT_CODE = 2
ERROR_EXIT_CODE = 1
#: subcommands whose arguments belong to another module's own parser
FORWARDED = {
    "demo": ("trainwire.cli.demo", "run a small training with a live view of its stream"),
    "conformance": ("trainwire.conformance", "run the conformance suite against harnesses"),
}


class _UsageError(CommandError):
    """Bad arguments found after parsing: exit 2, like argparse's own."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # argparse prints the whole usage; one line says what is wrong and where to look.
        self.exit(USAGE_EXIT_CODE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments and arguments[0] in FORWARDED:
        return _forward(arguments[0], arguments[1:])
    parser = _parser()
    options = parser.parse_args(arguments)
    try:
        command: Callable[[argparse.Namespace], int] = options.command
        return command(options)
    except _UsageError as error:
        return _fail(str(error), USAGE_EXIT_CODE)
    except CommandError as error:
        return _fail(str(error))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return ERROR_EXIT_CODE  # `trainwire state f | head`: the reader went away
    except OSError as error:
        return _fail(f"{error.filename or ''}: {error.strerror or error}".lstrip(": "))


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="trainwire", description="Follow, check and control trainwire progress streams.")
    parser.add_argument("--version", action="version", version=f"trainwire {__version__}")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)

    tail = commands.add_parser(
        "tail",
        help="show a stream live, for humans",
        description=f"Show a stream (a file, a run directory's {STREAM_FILE}, or one line per run in a directory of runs): live status lines on a terminal, plain lines elsewhere. Exits with the run's exit code ({TAIL_EXIT_CODES_TEXT}); with several runs, the highest.",
    )
    tail.add_argument("file", type=Path, metavar="PATH", help="a stream file or a run directory")
    tail.add_argument(
        "-f",
        "--follow",
        action="store_true",
        help="wait for the stream and follow it until the run finishes or turns stale",
    )
    tail.add_argument("--run", metavar="RUN_ID", help="the run to show (default: the last one in the file)")
    tail.add_argument(
        "--poll",
        type=positive_seconds,
        default=0.25,
        metavar="S",
        help="seconds between polls with --follow (default 0.25)",
    )
    tail.add_argument(
        "--timeout",
        type=positive_seconds,
        metavar="S",
        help=f"with --follow: end (exit {NOT_FINISHED_EXIT_CODE}) after S seconds without a new line, or without the stream (default: three heartbeat intervals; never without them)",
    )
    tail.set_defaults(command=_tail)

    state = commands.add_parser(
        "state",
        help="print the canonical reader state of a stream",
        description="Print the reader state (schemas/reader-state/v1) as canonical JSON.",
    )
    state.add_argument("file", type=Path, metavar="PATH", help=f"a stream file or a run directory (its {STREAM_FILE})")
    state.add_argument(
        "--now", type=rfc3339_time, metavar="ISO", help="the current time (RFC 3339): silent runs may turn stale"
    )
    state.add_argument(
        "--stale-after",
        type=positive_seconds,
        metavar="S",
        help="with --now: seconds of silence after which a run is stale",
    )
    state.add_argument(
        "--verdict",
        action="store_true",
        help="print each run's verdict (schemas/verdict/v1) instead: judged at --now, else without a clock "
        "(a run its host proves dead is stale either way)",
    )
    state.set_defaults(command=_state)

    validate = commands.add_parser(
        "validate",
        help="check a stream against the contract and the writer rules",
        description="Check every line against the contract and every run against the writer rules; exit 0 when there is no error (warnings allowed unless --strict), 1 otherwise.",
    )
    validate.add_argument(
        "file", type=Path, metavar="PATH", help=f"a stream file or a run directory (its {STREAM_FILE})"
    )
    validate.add_argument("--json", action="store_true", help="print the report as JSON")
    validate.add_argument("--strict", action="store_true", help="exit 1 on warnings too")
    validate.set_defaults(command=_validate)

    stop = commands.add_parser(
        "stop",
        help="ask the run writing into OUTPUT_DIR to stop cleanly",
        description="Create OUTPUT_DIR/.trainwire-stop atomically; the run saves a checkpoint and ends interrupted.",
    )
    stop.add_argument("output_dir", type=Path, metavar="OUTPUT_DIR")
    stop.add_argument("--reason", metavar="TEXT", help="why (recorded in stop.requested)")
    stop.add_argument("--by", metavar="NAME", help="who asks (recorded in stop.requested)")
    stop.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        metavar="S",
        help=f"wait at most S seconds (default 30) for the run to acknowledge (stop.requested); without one, exit {STOP_PENDING_EXIT_CODE}: the request stays pending",
    )
    stop.add_argument("--no-wait", action="store_true", help="write the request and return at once, without waiting")
    stop.set_defaults(command=_stop)

    plot = commands.add_parser(
        "plot",
        help="draw loss, learning rate and eval curves into a file",
        description="Draw the loss, learning rate and eval curves of one or more runs (restarts and checkpoints marked, runs overlaid): a self-contained HTML page, or PNG/SVG with matplotlib (pip install 'trainwire[plot]').",
    )
    plot.add_argument("runs", type=Path, nargs="+", metavar="RUN", help="a stream file or a run directory")
    plot.add_argument("--out", type=Path, required=True, metavar="FILE", help="the file to write: .html, .png or .svg")
    plot.set_defaults(command=_plot)

    schema = commands.add_parser(
        "schema",
        help="print the bundled JSON Schemas",
        description="Without options, list the schema families; with --bundle or --family, print that family's bundled schema.",
    )
    schema.add_argument("--bundle", action="store_true", help="print the bundled schema (default family trainwire-v1)")
    schema.add_argument("--family", choices=SCHEMA_FAMILIES, help="which schema family")
    schema.set_defaults(command=_schema)

    journal_commands.register(commands)
    serve_command.register(commands)
    add_export_commands(commands)

    for name, (_, summary) in FORWARDED.items():
        forwarded = commands.add_parser(name, help=summary, add_help=False)
        forwarded.set_defaults(command=None)
    return parser


# commands


def _tail(options: argparse.Namespace) -> int:
    from trainwire.cli.tail import tail
    from trainwire.reader.targets import stream_files

    if options.timeout is not None and not options.follow:
        raise _UsageError("--timeout needs --follow")
    if not options.follow:
        for path in stream_files(options.file):
            _check_readable(path)
    return tail(
        options.file, follow=options.follow, run_id=options.run, poll_interval_s=options.poll, timeout_s=options.timeout
    )


def _state(options: argparse.Namespace) -> int:
    from trainwire.reader.state import StreamReader

    if options.stale_after is not None and options.now is None:
        raise _UsageError("--stale-after needs --now")
    if options.verdict:
        return _state_verdicts(options)
    reader = StreamReader()
    stream = _run_stream(options.file)
    for chunk in _chunks(stream):
        reader.feed(chunk)
    reader.finish()
    _emit(reader.to_json(now=options.now, stale_after_s=options.stale_after) + "\n")
    _say_incomplete(stream, [run.run_id for run in reader.runs])
    return 0


def _say_incomplete(stream: Path, run_ids: list[str]) -> None:
    """One line on stderr per run whose journal says its stream lost lines (a run that lost
    every line has a journal only): the state, folded from the stream alone, cannot know it."""
    from trainwire.contract.layout import journal_dirs
    from trainwire.journal.completeness import journal_completeness
    from trainwire.lines.verdict import completeness_text

    journaled = [journal.name for journal in journal_dirs(stream.parent) if journal.name not in run_ids]
    for run_id in [*run_ids, *journaled]:
        lost = completeness_text(journal_completeness(stream.parent, run_id))
        if lost:
            sys.stderr.write(f"trainwire state: run {run_id}: {lost}\n")


def _state_verdicts(options: argparse.Namespace) -> int:
    """`state --verdict`: the verdict of each run of the stream, its kept steps included."""
    from trainwire.contract.clock import to_timestamp_us
    from trainwire.journal.kept_steps import KeptStepsMerge
    from trainwire.reader.state import StreamReader
    from trainwire.reader.verdicts import RunSummaries

    stream = _run_stream(options.file)
    reader, kept, summaries = StreamReader(), KeptStepsMerge(stream.parent), RunSummaries(stream.parent)
    for chunk in _chunks(stream):
        summaries.add(kept.merge(reader.feed(chunk).dicts))
    summaries.add(kept.finish())
    now = to_timestamp_us(options.now) if options.now is not None else None
    verdicts = [summaries.verdict(run.run_id, now, options.stale_after) for run in reader.runs]
    _emit(json.dumps(verdicts, ensure_ascii=False, indent=2) + "\n")
    return 0


def _validate(options: argparse.Namespace) -> int:
    from trainwire.reader.invariants import check_file

    stream = _run_stream(options.file)
    _check_readable(stream)
    violations = check_file(stream)
    errors = sum(violation.severity == "error" for violation in violations)
    warnings = len(violations) - errors
    failed = errors > 0 or (options.strict and warnings > 0)
    if options.json:
        report = {
            "file": str(stream),
            "valid": not failed,
            "errors": errors,
            "warnings": warnings,
            "violations": [v.to_dict() for v in violations],
        }
        _emit(json.dumps(report, ensure_ascii=False) + "\n")
    elif violations:
        for violation in violations:
            sys.stdout.write(f"{stream}:{violation}\n")
        sys.stdout.write(f"{stream}: {errors} error(s), {warnings} warning(s)\n")
    else:
        sys.stdout.write(f"{stream}: valid\n")
    return ERROR_EXIT_CODE if failed else 0


def _stop(options: argparse.Namespace) -> int:
    from trainwire.stop import request_stop, request_stop_and_wait

    # the run watches an existing directory: creating one here would stop nothing
    if not options.output_dir.exists():
        raise _UsageError(f"{options.output_dir}: no such directory (give the run's output directory)")
    if not options.output_dir.is_dir():
        raise _UsageError(f"{options.output_dir}: not a directory (give the run's output directory)")
    if options.no_wait:
        path = request_stop(options.output_dir, reason=options.reason, requested_by=options.by)
        sys.stdout.write(f"stop request written to {path}; not waiting for a run to acknowledge it (--no-wait)\n")
        return 0
    outcome = request_stop_and_wait(
        options.output_dir, reason=options.reason, requested_by=options.by, timeout_s=max(options.timeout, 0.0)
    )
    if outcome.acknowledged:
        step = f" at step {outcome.step}" if outcome.step is not None else ""
        sys.stdout.write(
            f"stop acknowledged by run {outcome.run_id}{step}: it ends interrupted (follow it: trainwire tail --follow {options.output_dir})\n"
        )
        return 0
    sys.stdout.write(
        f"stop not acknowledged within {options.timeout:g}s: the request stays pending in {outcome.path}"
        f" (a run that starts writing into {options.output_dir} honours it): {outcome.why}\n"
    )
    return STOP_PENDING_EXIT_CODE


def _plot(options: argparse.Namespace) -> int:
    from trainwire.cli import plot

    if plot.format_of(options.out) is None:
        raise _UsageError(f"--out {options.out}: give a file ending in {', '.join(plot.FORMATS)}")
    if not options.out.parent.is_dir():
        raise _UsageError(f"--out {options.out}: no such directory {options.out.parent}")
    paths = []
    for run in options.runs:
        for path in plot.stream_files(run):
            _check_readable(path)
            paths.append(path)
    try:
        plot.write_plot(paths, options.out)
    except plot.PlotUnavailable as error:
        raise CommandError(str(error)) from None
    sys.stdout.write(f"plot written: {options.out}\n")
    return 0


def _schema(options: argparse.Namespace) -> int:
    bundles = resources.files("trainwire._generated").joinpath("schemas")
    if not options.bundle and options.family is None:
        for family in SCHEMA_FAMILIES:
            schema = json.loads(bundles.joinpath(f"{family}.schema.json").read_text("utf-8"))
            sys.stdout.write(f"{family}\t{schema.get('$id', '')}\t{schema.get('title', '')}\n")
        return 0
    family = options.family or SCHEMA_FAMILIES[0]
    _emit(bundles.joinpath(f"{family}.schema.json").read_text("utf-8").rstrip("\n") + "\n")
    return 0


def _forward(name: str, arguments: list[str]) -> int:
    module_name = FORWARDED[name][0]
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        return _fail(f"{name}: unavailable ({error})")
    entry: Callable[[list[str]], int | None] = module.main
    try:
        return entry(arguments) or 0
    except MissingExtra as error:
        return _fail(f"{name}: {error}")
    except ModuleNotFoundError as error:
        # an optional dependency imported deep inside the command: name the extra, no traceback
        missing = missing_extra(error)
        if missing is None:
            raise
        return _fail(f"{name}: {missing}")


# helpers


def _run_stream(path: Path) -> Path:
    """The one stream `path` names: the file itself, or a run directory's stream (as `tail` reads it)."""
    if not path.is_dir():
        return path
    if not (path / STREAM_FILE).exists():
        raise CommandError(f"{path}: no {STREAM_FILE} in this directory (give a stream file or a run directory)")
    return path / STREAM_FILE


def _check_readable(path: Path) -> None:
    if not path.exists():
        raise CommandError(f"{path}: no such file")
    if path.is_dir():
        raise CommandError(f"{path}: is a directory, not a stream file")


def _chunks(path: Path) -> Iterator[bytes]:
    from trainwire.reader.sources import read_file

    _check_readable(path)
    return read_file(path)


def _emit(text: str) -> None:
    """Write UTF-8 whatever the locale: machine-readable output must be exact bytes."""
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:
        sys.stdout.write(text)
    else:
        sys.stdout.flush()
        buffer.write(text.encode("utf-8"))
        buffer.flush()


def _fail(message: str, code: int = ERROR_EXIT_CODE) -> int:
    sys.stderr.write(f"trainwire: error: {message}\n")
    return code
