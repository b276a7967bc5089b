"""The `trainwire` command: tail, state, validate, stop, schema, export, demo, conformance.

Errors are one line on stderr and a non-zero exit (2 for a usage error), never a traceback.
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

from trainwire import __version__

__all__ = ["main"]

USAGE_EXIT_CODE = 2
ERROR_EXIT_CODE = 1
SCHEMA_FAMILIES = ("trainwire-v1", "reader-state-v1", "harness-v1")
#: subcommands whose arguments belong to another module's own parser
FORWARDED = {
    "demo": ("trainwire.cli.demo", "run a small training with a live view of its stream"),
    "conformance": ("trainwire.conformance", "run the conformance suite against harnesses"),
}


class CommandError(Exception):
    """A failure to report as one line on stderr."""


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
        return options.command(options)
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

    tail = commands.add_parser("tail", help="show a stream live, for humans", description="Show a stream: a live status line on a terminal, plain lines elsewhere. Exits with the run's exit code (succeeded 0, failed 1, interrupted 2, reverted 3, awaiting_approval 4, not finished 5).")
    tail.add_argument("file", type=Path, metavar="FILE")
    tail.add_argument("-f", "--follow", action="store_true", help="wait for the file and follow it until the run finishes")
    tail.add_argument("--run", metavar="RUN_ID", help="the run to show (default: the last one in the file)")
    tail.add_argument("--poll", type=_positive_float, default=0.25, metavar="S", help="seconds between polls with --follow (default 0.25)")
    tail.set_defaults(command=_tail)

    state = commands.add_parser("state", help="print the canonical reader state of a stream", description="Print the reader state (schemas/reader-state/v1) as canonical JSON.")
    state.add_argument("file", type=Path, metavar="FILE")
    state.add_argument("--now", metavar="ISO", help="the current time (RFC 3339): silent runs may turn stale")
    state.add_argument("--stale-after", type=_positive_float, metavar="S", help="with --now: seconds of silence after which a run is stale")
    state.set_defaults(command=_state)

    validate = commands.add_parser("validate", help="check a stream against the contract and the writer rules", description="Check every line against the contract and every run against the writer rules; exit 0 when clean, 1 otherwise.")
    validate.add_argument("file", type=Path, metavar="FILE")
    validate.add_argument("--json", action="store_true", help="print the report as JSON")
    validate.set_defaults(command=_validate)

    stop = commands.add_parser("stop", help="ask the run writing into OUTPUT_DIR to stop cleanly", description="Create OUTPUT_DIR/.trainwire-stop atomically; the run saves a checkpoint and ends interrupted.")
    stop.add_argument("output_dir", type=Path, metavar="OUTPUT_DIR")
    stop.add_argument("--reason", metavar="TEXT", help="why (recorded in stop.requested)")
    stop.add_argument("--by", metavar="NAME", help="who asks (recorded in stop.requested)")
    stop.set_defaults(command=_stop)

    schema = commands.add_parser("schema", help="print the bundled JSON Schemas", description="Without options, list the schema families; with --bundle or --family, print that family's bundled schema.")
    schema.add_argument("--bundle", action="store_true", help="print the bundled schema (default family trainwire-v1)")
    schema.add_argument("--family", choices=SCHEMA_FAMILIES, help="which schema family")
    schema.set_defaults(command=_schema)

    from trainwire.cli.export import add_export_commands

    add_export_commands(commands)

    for name, (_, summary) in FORWARDED.items():
        forwarded = commands.add_parser(name, help=summary, add_help=False)
        forwarded.set_defaults(command=None)
    return parser


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0: {text!r}")
    return value


# commands


def _tail(options: argparse.Namespace) -> int:
    from trainwire.cli.tail import tail

    if not options.follow:
        _check_readable(options.file)
    elif options.file.is_dir():
        raise CommandError(f"{options.file}: is a directory, not a stream file")
    return tail(options.file, follow=options.follow, run_id=options.run, poll_interval_s=options.poll)


def _state(options: argparse.Namespace) -> int:
    from trainwire.contract.clock import parse_timestamp_us
    from trainwire.reader.state import StreamReader

    if options.stale_after is not None and options.now is None:
        raise _UsageError("--stale-after needs --now")
    if options.now is not None:
        try:
            parse_timestamp_us(options.now)
        except ValueError:
            raise _UsageError(f"--now: not an RFC 3339 time: {options.now!r}") from None
    reader = StreamReader()
    for chunk in _chunks(options.file):
        reader.feed(chunk)
    reader.finish()
    _emit(reader.to_json(now=options.now, stale_after_s=options.stale_after) + "\n")
    return 0


def _validate(options: argparse.Namespace) -> int:
    from trainwire.reader.invariants import check_stream

    _check_readable(options.file)
    violations = check_stream(options.file.read_bytes())
    if options.json:
        report = {"file": str(options.file), "valid": not violations, "violations": [v.to_dict() for v in violations]}
        _emit(json.dumps(report, ensure_ascii=False) + "\n")
    elif violations:
        for violation in violations:
            sys.stdout.write(f"{options.file}:{violation}\n")
        sys.stdout.write(f"{options.file}: {len(violations)} problem(s)\n")
    else:
        sys.stdout.write(f"{options.file}: valid\n")
    return 1 if violations else 0


def _stop(options: argparse.Namespace) -> int:
    from trainwire.stop import request_stop

    if not options.output_dir.is_dir():
        raise CommandError(f"{options.output_dir}: not a directory")
    path = request_stop(options.output_dir, reason=options.reason, requested_by=options.by)
    sys.stdout.write(f"stop requested: {path}\n")
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
    return entry(arguments) or 0


# helpers


def _check_readable(path: Path) -> None:
    if not path.exists():
        raise CommandError(f"{path}: no such file")
    if path.is_dir():
        raise CommandError(f"{path}: is a directory, not a stream file")


def _chunks(path: Path) -> Iterator[bytes]:
    _check_readable(path)
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            yield chunk


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
