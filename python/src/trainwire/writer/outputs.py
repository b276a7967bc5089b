"""Where a run's lines go: the sinks `Run` makes from its arguments, in the order it
writes to them (the file, then the journal beside it, stdout, callbacks, the caller's), and
the stream file that could not be opened, whose lines are lost."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable
from typing import Any

from trainwire.writer.journal import Journal
from trainwire.writer.sinks import CallbackSink, FileSink, Sink, StdoutSink

__all__ = ["UnopenedStreamFile", "open_sinks", "open_stream_file"]

logger = logging.getLogger("trainwire.writer")


class UnopenedStreamFile:
    """The stream file a run could not open (its directory cannot be made, a read-only file
    system): every line is lost with the error of the open, so the run's end says so."""

    carries_stream = True

    def __init__(self, path: str | os.PathLike[str], error: OSError) -> None:
        self.path = self.where = os.fspath(path)
        self.error = error

    def write(self, line: bytes, event: dict[str, Any]) -> None:
        raise OSError(self.error.errno, self.error.strerror, self.error.filename)

    def close(self) -> None:
        pass

    def __repr__(self) -> str:
        return f"UnopenedStreamFile({self.path!r})"


def open_stream_file(path: str | os.PathLike[str], *, fsync: bool = False) -> FileSink | UnopenedStreamFile:
    """A `FileSink` on `path`, or when the file cannot be opened an `UnopenedStreamFile`: the
    run goes on and its end says the stream was lost (writer rule 3)."""
    try:
        return FileSink(path, fsync=fsync)
    except OSError as exc:
        return UnopenedStreamFile(path, exc)


def open_sinks(
    output_dir: str | None,
    *,
    run_id: str,
    config_reference: str | os.PathLike[str] | None = None,
    file_name: str,
    fsync: bool,
    journal: bool,
    stdout: bool,
    callbacks: Iterable[Callable[[Any], object]],
    sinks: Iterable[Sink],
    step_interval_s: float = 1.0,
) -> tuple[list[Sink], Journal | None]:
    """The sinks, and the journal among them (None without one). A stream file that cannot
    be opened is an `UnopenedStreamFile` (its lines are lost): the run goes on with the other
    sinks, its end says the stream was lost, and the journal beside it records the loss when
    the directory can be written."""
    made: list[Sink] = []
    kept_journal = None
    if output_dir is not None:
        path = os.path.join(output_dir, file_name)
        try:
            os.makedirs(output_dir, exist_ok=True)
        except OSError as exc:
            stream: Sink = UnopenedStreamFile(path, exc)
        else:
            stream = open_stream_file(path, fsync=fsync)
        made.append(stream)
        # a stream file that cannot be opened in a directory that can be written (the file
        # read-only, or a directory): the journal beside it still records the run and its loss
        writable = isinstance(stream, FileSink) or os.access(output_dir, os.W_OK | os.X_OK)
        if journal and writable:
            try:
                kept_journal = Journal(
                    output_dir, run_id, stream=path, config_reference=config_reference, step_interval_s=step_interval_s
                )
                made.append(kept_journal)
            except OSError as exc:
                logger.warning("trainwire: cannot keep the journal in %s (%s); no journal", output_dir, exc)
    if stdout:
        made.append(StdoutSink())
    made.extend(CallbackSink(fn) for fn in callbacks)
    made.extend(sinks)
    return made, kept_journal
