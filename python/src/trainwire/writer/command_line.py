"""`--progress {plain,json}` for command-line tools, in two calls.

`progress_arguments(parser)` adds the flags; `run_from_arguments(args)` gives the `Run`:
- `--progress plain` (the default): a run that writes nothing, so the tool's own output is
  unchanged byte for byte;
- `--progress json`: NDJSON on standard output, which the stream owns from the moment the
  flag is parsed: every other write to standard output (prints, logging handlers, progress
  bars, child processes, native code) lands on standard error, for the rest of the process;
- `--progress-file PATH`: NDJSON appended to PATH; standard output is left to the tool.
"""

from __future__ import annotations

import argparse
from typing import Any

from trainwire.writer.outputs import open_stream_file
from trainwire.writer.run import Run
from trainwire.writer.sinks import OwnedStdoutSink, Sink, own_stdout, release_stdout

__all__ = ["PROGRESS_FORMATS", "progress_arguments", "run_from_arguments"]

#: the values of `--progress`
PROGRESS_FORMATS = ("plain", "json")


def progress_arguments(parser: argparse.ArgumentParser, *, default: str = "plain") -> argparse._ArgumentGroup:
    """Add `--progress {plain,json}` and `--progress-file PATH` to an `argparse` parser (in a
    group of their own, returned); read them back with `run_from_arguments(args)`."""
    if default not in PROGRESS_FORMATS:
        raise ValueError(f"default must be one of {PROGRESS_FORMATS}, not {default!r}")
    group = parser.add_argument_group("progress")
    group.add_argument(
        "--progress",
        action=_ProgressFormat,
        choices=PROGRESS_FORMATS,
        default=default,
        help=f"plain: the tool's own output; json: a trainwire NDJSON progress stream on standard output, everything else on standard error (default {default})",
    )
    group.add_argument(
        "--progress-file",
        action=_ProgressFile,
        metavar="PATH",
        help="append the NDJSON progress stream to PATH instead; standard output stays the tool's",
    )
    return group


def run_from_arguments(args: argparse.Namespace, **run_options: Any) -> Run:
    """The `Run` that `--progress` and `--progress-file` ask for (see the module's text);
    `run_options` go to `Run` (`step_interval_s`, `run_id`, `sinks`, ...)."""
    if not hasattr(args, "progress"):
        raise ValueError("args has no progress option: call trainwire.progress_arguments(parser) before parsing")
    sinks: list[Sink] = list(run_options.pop("sinks", ()))
    if getattr(args, "progress_file", None):
        sinks.append(open_stream_file(args.progress_file))  # one that cannot be opened: the run ends failed
    elif args.progress == "json":
        sinks.append(OwnedStdoutSink())
    return Run(None, sinks=sinks, **run_options)


class _ProgressFormat(argparse.Action):
    """`--progress json` takes standard output over as it is parsed, so that nothing the tool
    prints before it makes its run reaches the stream."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        setattr(namespace, self.dest, values)
        if values == "json" and not getattr(namespace, "progress_file", None):
            own_stdout()


class _ProgressFile(argparse.Action):
    """`--progress-file` sends the stream elsewhere: standard output goes back to the tool."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        setattr(namespace, self.dest, values)
        release_stdout()
