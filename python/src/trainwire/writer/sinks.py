"""Where lines go: a file, stdout, callbacks, memory; and the dispatcher that shields training from them."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import weakref
from collections.abc import Callable, Iterable
from types import MappingProxyType
from typing import Any, BinaryIO, Protocol, runtime_checkable

from pydantic_core import from_json

from trainwire.writer.stream_loss import (
    StreamLoss,
    StreamLost,
    carries_stream,
    completeness,
    may_come_back,
    stream_place,
)
from trainwire.writer.whole_lines import WholeLines

__all__ = [
    "CallbackSink",
    "Dispatcher",
    "FileSink",
    "MemorySink",
    "OwnedStdoutSink",
    "Sink",
    "StdoutSink",
    "own_stdout",
    "reader_view",
    "release_stdout",
    "stdout_carries_stream",
]

logger = logging.getLogger("trainwire.writer.sinks")

# The open sinks writing NDJSON to the process's standard output.
_STDOUT_STREAMS: weakref.WeakSet[StdoutSink | OwnedStdoutSink] = weakref.WeakSet()


def stdout_carries_stream() -> bool:
    """True while an open `StdoutSink` writes to standard output: nothing else may print there."""
    return len(_STDOUT_STREAMS) > 0


@runtime_checkable
class Sink(Protocol):
    """Receives every line of a run.

    `line` is the encoded line (UTF-8 JSON ending in `\\n`); `event` is the dict it was
    encoded from, which a sink must not change. A sink may raise: the run's dispatcher
    logs it once and disables the sink. A sink whose class sets `carries_stream = True` (and
    `where`) writes the run's stream: its lost lines are counted and said at the run's end.
    """

    def write(self, line: bytes, event: dict[str, Any]) -> None: ...

    def close(self) -> None: ...


class FileSink:
    """Appends lines to a file, one `write()` per line, with no buffering in between.

    The file is opened with `O_APPEND`, so several processes may append to one file
    without tearing or interleaving lines. `fsync=True` also forces each line to disk.
    When the file does not end with `\\n` (a writer killed mid-line) or a write of this
    sink failed part way, the next line starts with `\\n` (`WholeLines`).
    """

    carries_stream = True  # the run's stream: a line it loses is said at the run's end

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = False) -> None:
        self.path = self.where = os.fspath(path)
        self.fsync = fsync
        mid_line = _ends_mid_line(self.path)
        # The file object owns the descriptor (closed by close() or when collected); lines
        # go straight to os.write on it: one write(2) per line, no buffer in between.
        self._file = open(self.path, "ab", buffering=0)  # noqa: SIM115
        self._fd = self._file.fileno()
        self._lines = WholeLines(self._fd, self.path, mid_line=mid_line)

    @property
    def lines_made_whole(self) -> int:
        """Lost lines (their write failed) that a later write made whole in the file."""
        return self._lines.made_whole

    def write(self, line: bytes, event: dict[str, Any]) -> None:
        self._lines.write(line)
        if self.fsync:
            os.fsync(self._fd)

    def fileno(self) -> int:
        return self._fd

    def close(self) -> None:
        self._file.close()

    def __repr__(self) -> str:
        return f"FileSink({self.path!r})"


def _ends_mid_line(path: str) -> bool:
    """Whether the file exists, is not empty and its last byte is not `\\n`."""
    try:
        with open(path, "rb") as existing:
            if existing.seek(0, os.SEEK_END) == 0:
                return False
            existing.seek(-1, os.SEEK_END)
            return existing.read(1) != b"\n"
    except OSError:
        return False


class StdoutSink:
    """Writes NDJSON to standard output (its binary buffer), flushed per line.

    The stream is looked up when the sink is made; pass `stream` to write elsewhere.
    """

    carries_stream = True
    where = "standard output"

    def __init__(self, stream: BinaryIO | None = None) -> None:
        self._stream: Any = stream if stream is not None else getattr(sys.stdout, "buffer", sys.stdout)
        self._binary = not hasattr(self._stream, "encoding")
        if stream is None:
            _STDOUT_STREAMS.add(self)

    def write(self, line: bytes, event: dict[str, Any]) -> None:
        self._stream.write(line if self._binary else line.decode("utf-8"))
        self._stream.flush()

    def close(self) -> None:
        """Flushes; standard output itself stays open."""
        _STDOUT_STREAMS.discard(self)
        self._stream.flush()

    def __repr__(self) -> str:
        return "StdoutSink()"


class OwnedStdoutSink:
    """Writes NDJSON to standard output and owns it: the stream keeps a private copy of file
    descriptor 1, and descriptor 1 is pointed at standard error for the rest of the process,
    so prints, logging handlers made earlier, progress bars, child processes and native code
    writing to standard output land on standard error instead of breaking the NDJSON (also
    after the run: a consumer reads the stream to its end).
    """

    carries_stream = True
    where = "standard output"

    def __init__(self) -> None:
        fd = own_stdout()
        self._lines = None if fd is None else WholeLines(fd, self.where)
        if fd is not None:
            _STDOUT_STREAMS.add(self)

    @property
    def lines_made_whole(self) -> int:
        """Lost lines (their write failed) that a later write made whole on standard output."""
        return 0 if self._lines is None else self._lines.made_whole

    def write(self, line: bytes, event: dict[str, Any]) -> None:
        if self._lines is not None:
            self._lines.write(line)

    def close(self) -> None:
        """Ends this run's stream; standard output stays with the stream (see the class)."""
        _STDOUT_STREAMS.discard(self)
        with contextlib.suppress(ValueError, OSError):
            sys.stdout.flush()  # what was printed meanwhile goes to standard error now, in order

    def __repr__(self) -> str:
        return "OwnedStdoutSink()"


# the process's real standard output, once a stream owns it (descriptor 1 is standard error then)
_REAL_STDOUT: int | None = None


def own_stdout() -> int | None:
    """A descriptor of the real standard output, taken over on the first call (descriptor 1
    points at standard error from then on); None, with a warning, when there is none."""
    global _REAL_STDOUT
    if _REAL_STDOUT is None:
        try:
            sys.stdout.flush()  # what the tool printed before belongs on standard output
            real = os.dup(1)
            os.dup2(2, 1)
        except (OSError, ValueError) as exc:  # no standard output to own: write nothing, break nothing
            logger.warning("trainwire: cannot take over standard output (%s); no progress stream", exc)
            return None
        _REAL_STDOUT = real
    return _REAL_STDOUT


def release_stdout() -> None:
    """Give standard output back, when no stream has been written to it yet."""
    global _REAL_STDOUT
    if _REAL_STDOUT is not None and not _STDOUT_STREAMS:
        with contextlib.suppress(ValueError, OSError):
            sys.stdout.flush()
        os.dup2(_REAL_STDOUT, 1)
        os.close(_REAL_STDOUT)
        _REAL_STDOUT = None


class CallbackSink:
    """Calls `fn(event)` for each line.

    Each call gets its own read-only mapping decoded from the written line, so it sees
    exactly what a reader of the stream would (non-finite numbers are `None`), and
    nothing one callback does can change what another callback or sink receives.
    """

    def __init__(self, fn: Callable[[Any], object]) -> None:
        self.fn = fn

    def write(self, line: bytes, event: dict[str, Any]) -> None:
        self.fn(MappingProxyType(reader_view(line, event)))

    def close(self) -> None:
        pass

    def __repr__(self) -> str:
        return f"CallbackSink({getattr(self.fn, '__qualname__', self.fn)!r})"


#: the types a line's top-level value may have for `reader_view` to copy it as it is
_COPIED_AS_READ = frozenset((int, bool, type(None)))


def reader_view(line: bytes, event: dict[str, Any]) -> dict[str, Any]:
    """A fresh dict of what a reader decodes from `line`, the encoding of `event`.

    A line of plain values (ints, booleans, None, finite floats, ASCII strings; a
    `train.step` line without stage or metrics) decodes to a copy of `event`, so it is
    copied: cheaper than decoding. Anything else (a nested object, a non-finite float
    written as null, a value the encoder converted) is decoded from the line.
    """
    for value in event.values():
        kind = type(value)
        if kind is str:
            if not value.isascii():  # a lone surrogate is written replaced
                break
        elif kind is float:
            if value - value != 0.0:  # NaN and infinities are written as null
                break
        elif kind not in _COPIED_AS_READ:
            break
    else:
        return event.copy()
    decoded: dict[str, Any] = from_json(line)
    return decoded


class MemorySink:
    """Keeps every line in memory (for tests and scenarios)."""

    def __init__(self) -> None:
        self.lines: list[bytes] = []
        self.events: list[dict[str, Any]] = []

    def write(self, line: bytes, event: dict[str, Any]) -> None:
        self.lines.append(line)
        self.events.append(from_json(line))

    def write_raw(self, data: bytes) -> None:
        """Appends bytes as they are (not necessarily one line): for streams about bad input."""
        self.lines.append(data)

    def getvalue(self) -> bytes:
        """Everything written, as one byte string."""
        return b"".join(self.lines)

    def close(self) -> None:
        pass

    def __repr__(self) -> str:
        return f"MemorySink(<{len(self.lines)} lines>)"


# This process's id, refreshed in a forked child: a dispatcher compares it on every line,
# which is cheaper than asking the system (`os.getpid()`) each time.
_process_id = os.getpid()


def _after_fork_in_child() -> None:
    global _process_id
    _process_id = os.getpid()


if hasattr(os, "register_at_fork"):  # not on Windows, which has no fork either
    os.register_at_fork(after_in_child=_after_fork_in_child)


class Dispatcher:
    """Hands each line to every sink; nothing a sink does ever raises into the caller.

    A sink that raises is logged once and dropped, and training goes on with the others; a
    sink carrying the stream (`carries_stream`) has its lost lines counted (`losses`) for the
    run's end to say, and is kept for the next line when its disk may have room again (see
    `stream_loss`). `strict` (for tests) raises `StreamLost` at the first line the stream
    could not take.
    A forked child (a DataLoader worker, a multiprocessing fork) inherits the sinks but
    never writes to them: the stream belongs to the process that made the dispatcher.
    """

    def __init__(self, sinks: Iterable[Sink] = (), *, strict: bool = False) -> None:
        # a tuple, replaced whole when a sink is dropped, so a dispatch in progress is unaffected
        self.sinks: tuple[Sink, ...] = tuple(sinks)
        self._owner_pid = _process_id
        self._strict = strict
        #: what each stream sink lost, in the order of the first loss
        self.losses: list[StreamLoss] = []
        #: lines dispatched (the stream's lines, lost or not)
        self.dispatched = 0
        self._loss_of: dict[int, StreamLoss] = {}  # by id() of a stream sink that lost a line
        self._failing: dict[int, StreamLoss] = {}  # the same, of a kept sink whose last write failed

    def dispatch(self, line: bytes, event: dict[str, Any]) -> None:
        if _process_id != self._owner_pid:
            return
        self.dispatched += 1
        if self._failing:  # a stream sink is failing: see whether it takes this line
            self._dispatch_watching(line, event)
            return
        for sink in self.sinks:
            try:
                sink.write(line, event)
            except Exception as exc:
                self._failed(sink, exc)

    def _dispatch_watching(self, line: bytes, event: dict[str, Any]) -> None:
        for sink in self.sinks:
            try:
                sink.write(line, event)
            except Exception as exc:
                self._failed(sink, exc)
            else:
                self._written_again(sink)
            self._count_made_whole(sink)

    def _failed(self, sink: Sink, exc: BaseException) -> None:
        if not carries_stream(sink):
            self._disable(sink, exc)
            return
        loss = self._loss_of.get(id(sink))
        kept = may_come_back(exc)
        if loss is None:
            loss = self._loss_of[id(sink)] = StreamLoss.of(stream_place(sink), exc)
            self.losses.append(loss)
            logger.warning(
                "trainwire: the stream could not be written to %s (%s); training goes on, %s, and the "
                "run's end says how many lines were lost",
                loss.where,
                loss.reason,
                "each later line is tried again" if kept else "no more lines go there",
            )
        loss.failed += 1
        if self._strict:
            raise StreamLost(f"the stream lost a line: {loss.said(self.dispatched)}") from exc
        if kept:
            self._failing[id(sink)] = loss
            logger.debug("trainwire: %s lost a line (%s)", loss.where, exc)
        else:
            self._failing.pop(id(sink), None)
            loss.dropped_at = self.dispatched
            self._disable(sink, exc, quietly=True)  # its loss was said above

    def completeness(self) -> dict[str, Any] | None:
        """The stream part of the run's completeness so far, None when nothing was lost."""
        return completeness(self.lost_lines(), self.dispatched)

    def lost_lines(self) -> list[StreamLoss]:
        """The losses of the stream sinks that lost lines so far (a line whose write failed but
        a later line's `\\n` made whole in the file is not lost)."""
        return [loss for loss in self.losses if loss.lost(self.dispatched)]

    def _count_made_whole(self, sink: Sink) -> None:
        # a line counted lost whose write left all but its `\n`, which this line's write supplied
        loss = self._loss_of.get(id(sink))
        if loss is None:
            return
        made_whole = getattr(sink, "lines_made_whole", 0)  # a sink of a user's may have none
        if isinstance(made_whole, int):
            loss.made_whole = made_whole

    def _written_again(self, sink: Sink) -> None:
        loss = self._failing.pop(id(sink), None)
        if loss is not None:
            loss.came_back = True

    def _disable(self, sink: Sink, exc: BaseException, *, quietly: bool = False) -> None:
        self.sinks = tuple(other for other in self.sinks if other is not sink)
        if not quietly:
            logger.warning(
                "trainwire: %r failed (%s: %s); it gets no more lines from this run",
                sink,
                type(exc).__name__,
                exc,
            )
        try:
            sink.close()
        except Exception:
            logger.debug("closing the failed sink %r raised too", sink, exc_info=True)

    def close(self) -> None:
        """Closes every sink, never raising."""
        sinks, self.sinks = self.sinks, ()
        if _process_id != self._owner_pid:
            return  # the parent's sinks: a forked child leaves them (and their buffers) alone
        for sink in sinks:
            try:
                sink.close()
            except Exception:
                logger.debug("closing %r raised", sink, exc_info=True)
