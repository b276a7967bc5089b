"""`trainwire tail`: a live, human view of one or several streams.

On a terminal: one status line per stream redrawn in place (see `status_line`), with notable
events printed above. Elsewhere (a pipe, a CI log): one plain line per event of interest.
With `follow`, it waits for streams that do not exist yet (saying so) and ends when every
run has finished or turned stale (silent for `timeout_s`, else for three heartbeat
intervals). Exits with the run's exit code (succeeded 0, failed 1, interrupted 2, reverted 3,
awaiting_approval 4, not finished or stale 5); with several streams, the highest of them.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from trainwire.cli.status_line import RunTrend, format_duration, now_us, printable, render_status, status_fields
from trainwire.contract.layout import STREAM_FILE
from trainwire.reader.sources import FileFollower, read_file
from trainwire.reader.state import RunState, StreamReader

__all__ = ["NOT_FINISHED_EXIT_CODE", "StreamTail", "TailView", "stream_files", "tail", "target_run"]

#: the exit code when the run has not finished (still running, stale, or not there yet)
NOT_FINISHED_EXIT_CODE = 5
#: the file a run writes into its output directory


def stream_files(path: Path) -> list[Path]:
    """The streams `path` names: a file; a run directory's progress.jsonl; or every run's in a directory of runs.

    A directory with no stream yet names its own progress.jsonl, to be waited for; so does a
    path that does not exist yet and has no suffix (`out`, not `out.jsonl`).
    """
    if not path.is_dir():
        return [path / STREAM_FILE] if not path.exists() and not path.suffix else [path]
    own = path / STREAM_FILE
    if own.exists():
        return [own]
    runs = sorted(path.glob(f"*/{STREAM_FILE}")) + sorted(file for file in path.glob("*.jsonl") if file.is_file())
    return runs or [own]


def tail(
    path: str | os.PathLike[str],
    *,
    follow: bool = False,
    run_id: str | None = None,
    poll_interval_s: float = 0.25,
    timeout_s: float | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
    tty: bool | None = None,
    colour: bool | None = None,
    stop: threading.Event | None = None,
) -> int:
    """Show the streams at `path`; with `follow`, until each run (`run_id`, else the last one) ends."""
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    tty = out.isatty() if tty is None else tty
    colour = tty and not os.environ.get("NO_COLOR") if colour is None else colour
    view = TailView(out, err, tty=tty, colour=colour, run_id=run_id)
    streams = [StreamTail(file, view, run_id) for file in stream_files(Path(path))]
    if follow:
        _follow(streams, view, poll_interval_s, timeout_s, stop or threading.Event())
    else:
        for stream in streams:
            for chunk in read_file(stream.path):
                stream.feed(chunk)
        view.refresh(streams, timeout_s)
    for stream in streams:
        stream.reader.finish()
    return view.close(streams, timeout_s)


def _follow(
    streams: list[StreamTail], view: TailView, poll_interval_s: float, timeout_s: float | None, stop: threading.Event
) -> None:
    """Read every stream as it grows until each run is over (finished or stale), or `stop` is set and all is read."""
    started = time.monotonic()
    for stream in streams:
        if not stream.path.exists():
            view.note(f"waiting for {stream.path} (it does not exist yet)")
    # poll_interval_s=0: each follower yields b"" at its end; the loop below does the waiting
    chunks = [
        iter(FileFollower(s.path, poll_interval_s=0, stop=stop, on_reset=s.start_over, yield_when_idle=True))
        for s in streams
    ]
    try:
        _read_until_over(streams, chunks, view, poll_interval_s, timeout_s, stop, started)
    finally:
        for source in chunks:
            source.close()  # type: ignore[attr-defined]


def _read_until_over(
    streams: list[StreamTail],
    chunks: list[Iterator[bytes]],
    view: TailView,
    poll_interval_s: float,
    timeout_s: float | None,
    stop: threading.Event,
    started: float,
) -> None:
    while True:
        idle = True
        ended = 0
        for stream, source in zip(streams, chunks):
            chunk = next(source, None)
            if chunk is None:
                ended += 1
            elif chunk:
                idle = False
                stream.feed(chunk)
        if ended == len(streams):
            return
        if not idle:
            continue
        view.refresh(streams, timeout_s)
        waited_out = timeout_s is not None and time.monotonic() - started > timeout_s
        if all(stream.is_over(now_us(), timeout_s, waited_out) for stream in streams):
            return
        stop.wait(poll_interval_s)


def target_run(reader: StreamReader, run_id: str | None) -> RunState | None:
    """The run to show: `run_id`, else the last one in the stream."""
    if run_id is not None:
        return reader.run(run_id)
    runs = reader.runs
    return runs[-1] if runs else None


class StreamTail:
    """One stream being shown: its reader and the trend of each of its runs."""

    def __init__(self, path: Path, view: TailView, run_id: str | None) -> None:
        self.path = path
        self.view = view
        self.run_id = run_id
        self.reader = StreamReader()
        self.trends: dict[str, RunTrend] = {}
        self._diagnostics_shown = 0
        self._dropped_shown = 0

    def feed(self, chunk: bytes) -> None:
        events = self.reader.feed(chunk)
        for event in events:
            self.trends.setdefault(event.run_id, RunTrend()).add(event)
        self.view.show(self, events)

    def start_over(self, reason: str) -> None:
        """The file was truncated or replaced: read it again with a fresh reader."""
        self.reader = StreamReader()
        self.trends = {}
        self._diagnostics_shown = 0
        self._dropped_shown = 0
        self.view.note(f"{self.path} was {reason}; reading it from the start")

    def new_diagnostics(self) -> list[Any]:
        fresh = self.reader.diagnostics[self._diagnostics_shown :]
        self._diagnostics_shown = len(self.reader.diagnostics)
        return fresh

    def new_dropped(self) -> int:
        """Bad lines past the reader's diagnostics bound since the last call: counted, not listed."""
        dropped = self.reader.diagnostics.dropped - self._dropped_shown
        self._dropped_shown = self.reader.diagnostics.dropped
        return dropped

    @property
    def run(self) -> RunState | None:
        return target_run(self.reader, self.run_id)

    def status(self, now_us: int, timeout_s: float | None) -> str | None:
        run = self.run
        return None if run is None else run.status_at(now_us, timeout_s)

    def is_over(self, now_us: int, timeout_s: float | None, waited_out: bool) -> bool:
        """Finished, stale, or (after the timeout) still without its run."""
        status = self.status(now_us, timeout_s)
        if status is None:
            return waited_out
        return status != "running"

    def trend(self, run: RunState) -> RunTrend:
        return self.trends.get(run.run_id) or RunTrend()


class TailView:
    """Renders streams: redrawn status lines on a TTY, plain lines elsewhere."""

    def __init__(self, out: TextIO, err: TextIO, *, tty: bool, colour: bool = False, run_id: str | None = None) -> None:
        self.out = out
        self.err = err
        self.tty = tty
        self.colour = colour
        self.run_id = run_id
        self.unicode = _can_encode(out, "▁█")
        self._status_lines = 0

    def show(self, stream: StreamTail, events: Sequence[Any]) -> None:
        """After a chunk: print its notable events and its diagnostics."""
        for event in events:
            if self.run_id is not None and event.run_id != self.run_id:
                continue
            if self.tty and event.event == "train.step":
                continue  # the status line shows steps
            text = describe(event)
            if text is not None:
                self._line(f"[{event.run_id}] {text}", self.out)
        for diagnostic in stream.new_diagnostics():
            self._line(f"{stream.path}: line {diagnostic.line}: {diagnostic.code}: {diagnostic.message}", self.err)
        dropped = stream.new_dropped()
        if dropped:
            self._line(
                f"{stream.path}: {dropped} more bad lines (only the first {stream.reader.diagnostics.limit} are listed)",
                self.err,
            )

    def refresh(self, streams: list[StreamTail], timeout_s: float | None = None) -> None:
        """Redraw one status line per stream that has its run (on a TTY only)."""
        if not self.tty:
            return
        now = now_us()
        width = max(20, shutil.get_terminal_size((100, 24)).columns - 1)
        lines = []
        for stream in streams:
            run = stream.run
            if run is not None:
                fields = status_fields(run, stream.trend(run), run.status_at(now, timeout_s), now, unicode=self.unicode)
                lines.append(render_status(fields, width, colour=self.colour))
        if not lines:
            return
        self._clear_status()
        self.out.write("\n".join(lines))
        self.out.flush()
        self._status_lines = len(lines)

    def note(self, message: str) -> None:
        """A message about a stream itself (waiting for it, reading it again)."""
        self._line(message, self.err)

    def close(self, streams: list[StreamTail], timeout_s: float | None = None) -> int:
        """Print each run's final status; return the highest exit code."""
        self._clear_status()
        now = now_us()
        codes = []
        for stream in streams:
            run = stream.run
            if run is None:
                which = f"run {self.run_id}" if self.run_id is not None else "run"
                where = f" of {stream.path}" if len(streams) > 1 else ""
                self._line(f"no {which} in the stream{where} yet", self.out)
                codes.append(NOT_FINISHED_EXIT_CODE)
                continue
            self._line(f"[{run.run_id}] {run.status_at(now, timeout_s)}: {_summary(run)}", self.out)
            codes.append(NOT_FINISHED_EXIT_CODE if run.exit_code is None else run.exit_code)
        return max(codes)

    def _line(self, text: str, stream: TextIO) -> None:
        self._clear_status()
        stream.write(printable(text) + "\n")
        stream.flush()

    def _clear_status(self) -> None:
        if self._status_lines:
            # back to the first status line, then clear to the end of the screen
            up = f"\x1b[{self._status_lines - 1}A" if self._status_lines > 1 else ""
            self.out.write(up + "\r\x1b[J")
            self.out.flush()
            self._status_lines = 0


def describe(event: Any) -> str | None:
    """A plain line for an event of interest; None for the others (heartbeats, unknown events)."""
    name = event.event
    if name == "run.started":
        total = "unknown" if event.total_steps is None else event.total_steps
        return f"run started by {event.producer.name} {event.producer.version}, total steps {total}"
    if name == "phase.started":
        return f"phase {event.phase} started"
    if name == "phase.ended":
        return f"phase {event.phase} {event.status} in {format_duration(event.duration_s)}"
    if name == "train.step":
        text = f"step {event.step}" + (f"/{event.total_steps}" if event.total_steps is not None else "")
        if event.progress is not None:
            text += f" ({event.progress:.0%})"
        if event.loss is not None:
            text += f" loss {event.loss:.4g}"
        if event.learning_rate is not None:
            text += f" lr {event.learning_rate:.2e}"
        if event.eta_s is not None:
            text += f" eta {format_duration(event.eta_s)}"
        return text
    if name == "train.epoch":
        return f"epoch {event.epoch} done at step {event.step}" + _metrics(event.metrics)
    if name == "train.restarted":
        sizes = ""
        if event.batch_size_from is not None and event.batch_size_to is not None:
            sizes = f", batch size {event.batch_size_from} -> {event.batch_size_to}"
        return f"restarted ({event.reason}): attempt {event.attempt} from step {event.step} (was at {event.previous_step}{sizes})"
    if name == "eval.completed":
        return f"eval ({event.split}) at step {event.step}" + _metrics(event.metrics)
    if name == "checkpoint.saved":
        return f"checkpoint {event.path} ({event.reason}) at step {event.step}"
    if name == "trial.started":
        return f"trial {event.trial} started (attempt {event.attempt})"
    if name == "trial.ended":
        return f"trial {event.trial} {event.status} in {format_duration(event.duration_s)}" + _metrics(event.metrics)
    if name == "stop.requested":
        who = f" by {event.requested_by}" if event.requested_by else ""
        why = f": {event.reason}" if event.reason else ""
        source = event.signal or event.source
        return f"stop requested ({source}){who}{why}"
    if name == "run.finished":
        return (
            f"run finished: {event.status}"
            + (f" at step {event.step}" if event.step is not None else "")
            + f" in {format_duration(event.duration_s)}"
        )
    return None


def _summary(run: RunState) -> str:
    finished = run.finished
    parts = []
    if run.step is not None:
        parts.append(f"step {run.step}" + (f"/{run.total_steps}" if run.total_steps is not None else ""))
    if finished is not None:
        error = finished.get("error")
        if error:
            parts.append(f"{error.get('type')}: {error.get('message')}")
        if finished.get("reason"):
            parts.append(f"reason {finished['reason']}")
        if finished.get("checkpoint"):
            parts.append(f"checkpoint {finished['checkpoint']}")
    else:
        parts.append(f"last line at {run.last_ts}")
    if run.restarts:
        parts.append(f"{len(run.restarts)} restart(s)")
    return ", ".join(parts) or "no steps"


def _metrics(metrics: dict[str, float | None]) -> str:
    shown = [f"{name} {'null' if value is None else format(value, '.4g')}" for name, value in list(metrics.items())[:4]]
    return (": " + ", ".join(shown)) if shown else ""


def _can_encode(out: TextIO, text: str) -> bool:
    try:
        text.encode(getattr(out, "encoding", None) or "utf-8")
    except (UnicodeEncodeError, LookupError):
        return False
    return True
