"""`trainwire tail`: a live, human view of one or several streams.

On a terminal: one status line per stream redrawn in place (see `status_line`), with notable
events printed above. Elsewhere (a pipe, a CI log): one plain line per event of interest.
With `follow`, it waits for streams that do not exist yet (saying so) and ends when every
run has finished or turned stale (silent for `timeout_s`, else for three heartbeat
intervals). Exits with the run's exit code (`TAIL_EXIT_CODES_TEXT` of the generated contract:
`NOT_FINISHED_EXIT_CODE` when not finished or stale); with several streams, the highest.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from trainwire._generated.contract import NOT_FINISHED_EXIT_CODE
from trainwire.cli.status_line import (
    RunTrend,
    cycle_text,
    item_progress_text,
    printable,
    render_status,
    status_fields,
    trial_text,
)
from trainwire.contract.clock import now_us
from trainwire.contract.humanize import format_duration
from trainwire.contract.status import EXIT_CODES
from trainwire.journal.kept_steps import VIEW_TAIL_BYTES, KeptStepsMerge, fold_latest_kept_steps
from trainwire.lines.verdict import is_over, verdict_text
from trainwire.reader.sources import FileFollower, read_file
from trainwire.reader.state import RunState, StreamReader
from trainwire.reader.targets import stream_files, target_run
from trainwire.reader.verdicts import RunSummaries

__all__ = ["NOT_FINISHED_EXIT_CODE", "StreamTail", "TailView", "tail"]


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
        for stream, source in zip(streams, chunks, strict=False):
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
        for stream in streams:
            stream.catch_up()  # steps kept while the stream was quiet
        view.refresh(streams, timeout_s)
        waited_out = timeout_s is not None and time.monotonic() - started > timeout_s
        if all(stream.is_over(now_us(), timeout_s, waited_out) for stream in streams):
            return
        stop.wait(poll_interval_s)


class StreamTail:
    """One stream being shown: its reader and the trend of each of its runs. A run's state
    goes on past its last stream step with the steps its journal kept (the throttle's), so a
    run killed mid-way shows the last step it logged; the lines printed are the stream's."""

    def __init__(self, path: Path, view: TailView, run_id: str | None) -> None:
        self.path = path
        self.view = view
        self.run_id = run_id
        self.reader = StreamReader()
        self.kept = _kept_steps(path, view)
        self.trends: dict[str, RunTrend] = {}
        self.summaries = RunSummaries(path.parent, stream=path)
        self._diagnostics_shown = 0
        self._dropped_shown = 0

    def feed(self, chunk: bytes) -> None:
        events = self.reader.feed(chunk)
        for event in events:
            self.trends.setdefault(event.run_id, RunTrend()).add(event)
        self.view.show(self, events)
        self.catch_up(events.dicts)

    def catch_up(self, lines: Sequence[dict[str, Any]] = ()) -> None:
        """Folds into the runs' states the steps their journals kept since their last stream
        steps (`lines`: the stream lines just folded, which come between)."""
        merged = [*self.kept.merge(lines), *self.kept.flush()]
        self.summaries.add(merged)
        fold_latest_kept_steps({run.run_id: run for run in self.reader.runs}, merged)

    def start_over(self, reason: str) -> None:
        """The file was truncated or replaced: read it again with a fresh reader."""
        self.reader = StreamReader()
        self.kept = _kept_steps(self.path, self.view)
        self.trends = {}
        self.summaries = RunSummaries(self.path.parent, stream=self.path)
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

    def verdict(self, now_us: int, timeout_s: float | None) -> dict[str, Any] | None:
        """The verdict of the run shown (`lines.verdict`), or None before its first line."""
        run = self.run
        return None if run is None else self.summaries.verdict(run.run_id, now_us, timeout_s)

    def is_over(self, now_us: int, timeout_s: float | None, waited_out: bool) -> bool:
        """Finished, stale or proven gone (the verdict's rule), or (after the timeout) still without its run."""
        verdict = self.verdict(now_us, timeout_s)
        if verdict is None:
            return waited_out
        return is_over(verdict)

    def trend(self, run: RunState) -> RunTrend:
        return self.trends.get(run.run_id) or RunTrend()


def _kept_steps(path: Path, view: TailView) -> KeptStepsMerge:
    """The steps the journal keeps beside the stream at `path`, from its step files' ends on:
    where a run is needs its latest, not all of them."""
    return KeptStepsMerge(path.parent, tail_bytes=VIEW_TAIL_BYTES, report=view.note)


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
            if self.tty and event.event in ("train.step", "phase.progress"):
                continue  # the status line shows steps and counted items
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
            verdict = stream.verdict(now, timeout_s)
            if run is not None and verdict is not None:
                fields = status_fields(run, stream.trend(run), verdict["status"], now, unicode=self.unicode)
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
            verdict = stream.verdict(now, timeout_s) or {}
            details = _details(run)
            self._line(
                f"[{run.run_id}] {verdict_text(verdict, run.total_steps)}" + (f", {details}" if details else ""),
                self.out,
            )
            codes.append(NOT_FINISHED_EXIT_CODE if verdict.get("exit_code") is None else verdict["exit_code"])
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
    text = _DESCRIPTIONS.get(event.event)
    return None if text is None else text(event)


def _run_started(event: Any) -> str:
    total = "unknown" if event.total_steps is None else event.total_steps
    return f"run started by {event.producer.name} {event.producer.version}, total steps {total}"


def _in_trial(event: Any) -> str:
    """`trial 3: ` before an event of a trial."""
    return "" if getattr(event, "trial", None) is None else f"{trial_text(event.trial, None)}: "


def _in_cycle(event: Any) -> str:
    return "" if event.cycle is None else f" ({cycle_text(event.cycle, event.total_cycles)})"


def _phase_progress(event: Any) -> str:
    return _in_trial(event) + item_progress_text(event.phase, event.done, event.total, event.unit, event.eta_s)


def _train_rolled_back(event: Any) -> str:
    checkpoint = f" ({event.checkpoint})" if event.checkpoint is not None else ""
    why = f": {event.reason}" if event.reason else ""
    return f"{_in_trial(event)}rolled back from step {event.previous_step} to step {event.step}{checkpoint}{why}"


def _trial_ended(event: Any) -> str:
    decided = "" if event.accepted is None else (", accepted" if event.accepted else ", rejected")
    return f"trial {event.trial} {event.status} in {format_duration(event.duration_s)}{decided}" + _metrics(
        event.metrics
    )


def _train_step(event: Any) -> str:
    text = _in_trial(event) + f"step {event.step}" + (f"/{event.total_steps}" if event.total_steps is not None else "")
    if event.progress is not None:
        text += f" ({event.progress:.0%})"
    if event.loss is not None:
        text += f" loss {event.loss:.4g}"
    if event.learning_rate is not None:
        text += f" lr {event.learning_rate:.2e}"
    if event.eta_s is not None:
        text += f" eta {format_duration(event.eta_s)}"
    return text


def _train_restarted(event: Any) -> str:
    sizes = ""
    if event.batch_size_from is not None and event.batch_size_to is not None:
        sizes = f", batch size {event.batch_size_from} -> {event.batch_size_to}"
    return f"{_in_trial(event)}restarted ({event.reason}): attempt {event.attempt} from step {event.step} (was at {event.previous_step}{sizes})"


def _stop_requested(event: Any) -> str:
    who = f" by {event.requested_by}" if event.requested_by else ""
    why = f": {event.reason}" if event.reason else ""
    source = event.signal or event.source
    criterion = f", criterion met: {event.criterion}" if event.criterion else ""
    return f"stop requested ({source}){who}{why}{criterion}"


#: every event -> its plain line; None: not printed (a test requires every event of the contract)
_DESCRIPTIONS: dict[str, Callable[[Any], str] | None] = {
    "run.started": _run_started,
    "run.heartbeat": None,
    "phase.progress": _phase_progress,
    "train.rolled_back": _train_rolled_back,
    "phase.started": lambda event: f"{_in_trial(event)}phase {event.phase} started{_in_cycle(event)}",
    "phase.ended": lambda event: (
        f"{_in_trial(event)}phase {event.phase} {event.status} in {format_duration(event.duration_s)}{_in_cycle(event)}"
    ),
    "train.step": _train_step,
    "train.epoch": lambda event: f"epoch {event.epoch} done at step {event.step}" + _metrics(event.metrics),
    "train.restarted": _train_restarted,
    "eval.completed": lambda event: f"eval ({event.split}) at step {event.step}" + _metrics(event.metrics),
    "checkpoint.saved": lambda event: f"checkpoint {event.path} ({event.reason}) at step {event.step}",
    "trial.started": lambda event: (
        f"trial {event.trial} started (attempt {event.attempt}{', baseline' if event.baseline else ''})"
    ),
    "trial.ended": _trial_ended,
    "stop.requested": _stop_requested,
    "run.finished": lambda event: (
        f"run finished: {event.status}"
        + (f" at step {event.step}" if event.step is not None else "")
        + f" in {format_duration(event.duration_s)}"
    ),
}


def _details(run: RunState) -> str:
    """What the verdict does not say: the error, the stop's reason, item progress, restarts."""
    finished = run.finished
    parts = []
    if finished is not None:
        error = finished.get("error")
        if error:
            parts.append(f"{error.get('type')}: {error.get('message')}")
        if finished.get("reason"):
            parts.append(f"reason {finished['reason']}")
    counted = run.phase_progress
    if counted is not None:
        parts.append(item_progress_text(counted["phase"], counted["done"], counted["total"], counted["unit"], None))
    if run.restarts:
        parts.append(f"{len(run.restarts)} restart(s)")
    if run.rollbacks:
        parts.append(f"{len(run.rollbacks)} rollback(s)")
    if run.stop_criterion:
        parts.append(f"stopped for: {run.stop_criterion}")
    if finished is not None and run.exit_code != EXIT_CODES.get(run.status):
        parts.append(f"the host's exit code {run.exit_code}")  # not the status's own code
    return ", ".join(parts)


def _metrics(metrics: dict[str, float | None]) -> str:
    shown = [f"{name} {'null' if value is None else format(value, '.4g')}" for name, value in list(metrics.items())[:4]]
    return (": " + ", ".join(shown)) if shown else ""


def _can_encode(out: TextIO, text: str) -> bool:
    try:
        text.encode(getattr(out, "encoding", None) or "utf-8")
    except (UnicodeEncodeError, LookupError):
        return False
    return True
