"""`trainwire tail`: a live, human view of a stream.

On a terminal: one status line redrawn in place (progress bar, step/total, ETA, loss,
learning rate, phase, restarts), with notable events printed above it. Elsewhere (a
pipe, a CI log): one plain line per event of interest. Ends with the run's terminal
status; the exit code is the run's (succeeded 0, failed 1, interrupted 2, reverted 3,
awaiting_approval 4, not finished 5).
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TextIO

from trainwire.contract.clock import to_timestamp_us
from trainwire.reader.sources import FileFollower
from trainwire.reader.state import RunState, StreamReader

__all__ = ["NOT_FINISHED_EXIT_CODE", "TailView", "tail"]

#: the exit code when the run has not finished (still running, killed, or not there yet)
NOT_FINISHED_EXIT_CODE = 5
_READ_BYTES = 1 << 20
_BAR_WIDTH = 20


def tail(
    path: str | os.PathLike[str],
    *,
    follow: bool = False,
    run_id: str | None = None,
    poll_interval_s: float = 0.25,
    out: TextIO | None = None,
    err: TextIO | None = None,
    tty: bool | None = None,
    stop: threading.Event | None = None,
) -> int:
    """Show the stream at `path`; with `follow`, until the run (`run_id`, else the last one) finishes."""
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    view = TailView(out, err, tty=out.isatty() if tty is None else tty, run_id=run_id)
    reader = StreamReader()

    def start_over(reason: str) -> None:
        nonlocal reader
        reader = StreamReader()
        view.note(f"{path} was {reason}; reading it from the start")

    if follow:
        follower = FileFollower(path, poll_interval_s=poll_interval_s, stop=stop, on_reset=start_over, yield_when_idle=True)
        chunks: Iterable[bytes] = follower
    else:
        chunks = _read_file(Path(path))
    for chunk in chunks:
        if chunk:
            view.show(reader, reader.feed(chunk))
        elif follow:  # the end of the file for now: stop when the run is over
            view.refresh(reader)
            run = _target_run(reader, run_id)
            if run is not None and run.finished is not None:
                break
    reader.finish()
    return view.close(_target_run(reader, run_id))


def _read_file(path: Path) -> Iterator[bytes]:
    with open(path, "rb") as handle:
        while chunk := handle.read(_READ_BYTES):
            yield chunk


def _target_run(reader: StreamReader, run_id: str | None) -> RunState | None:
    if run_id is not None:
        return reader.run(run_id)
    runs = reader.runs
    return runs[-1] if runs else None


class TailView:
    """Renders a reader's progress: a redrawn status line on a TTY, plain lines elsewhere."""

    def __init__(self, out: TextIO, err: TextIO, *, tty: bool, run_id: str | None = None) -> None:
        self.out = out
        self.err = err
        self.tty = tty
        self.run_id = run_id
        self._status_shown = False
        self._diagnostics_shown = 0

    def show(self, reader: StreamReader, events: list[Any]) -> None:
        """After a chunk: print its notable events, its diagnostics, and redraw the status."""
        for event in events:
            if self.run_id is not None and event.run_id != self.run_id:
                continue
            if self.tty and event.event == "train.step":
                continue  # the status line shows steps
            text = describe(event)
            if text is not None:
                self._line(f"[{event.run_id}] {text}", self.out)
        for diagnostic in reader.diagnostics[self._diagnostics_shown :]:
            self._line(f"line {diagnostic.line}: {diagnostic.code}: {diagnostic.message}", self.err)
        self._diagnostics_shown = len(reader.diagnostics)
        self.refresh(reader)

    def refresh(self, reader: StreamReader) -> None:
        """Redraw the status line (on a TTY only)."""
        run = _target_run(reader, self.run_id)
        if not self.tty or run is None:
            return
        width = max(20, shutil.get_terminal_size((100, 24)).columns - 1)
        self.out.write("\r\x1b[K" + status_line(run, _now_us())[:width])
        self.out.flush()
        self._status_shown = True

    def note(self, message: str) -> None:
        """A message about the stream itself; the next reader starts its diagnostics afresh."""
        self._line(message, self.err)
        self._diagnostics_shown = 0

    def close(self, run: RunState | None) -> int:
        """Print the terminal status; return the exit code."""
        self._clear_status()
        if run is None:
            which = f"run {self.run_id}" if self.run_id is not None else "run"
            self.out.write(f"no {which} in the stream yet\n")
            self.out.flush()
            return NOT_FINISHED_EXIT_CODE
        status = run.status_at(_now_us())
        self.out.write(f"[{run.run_id}] {status}: {_summary(run)}\n")
        self.out.flush()
        code = run.exit_code
        return NOT_FINISHED_EXIT_CODE if code is None else code

    def _line(self, text: str, stream: TextIO) -> None:
        self._clear_status()
        stream.write(text + "\n")
        stream.flush()

    def _clear_status(self) -> None:
        if self._status_shown:
            self.out.write("\r\x1b[K")
            self.out.flush()
            self._status_shown = False


def status_line(run: RunState, now_us: int | None = None) -> str:
    """One line: `[run] phase [bar] 45% step 450/1000 eta 0:01:23 loss 2.34 lr 1.0e-04 restarts 1`."""
    parts = [f"[{run.run_id}]", run.status_at(now_us)]
    if run.phase:
        parts.append(run.phase)
    if run.progress is not None:
        filled = round(run.progress * _BAR_WIDTH)
        parts.append("[" + "#" * filled + "." * (_BAR_WIDTH - filled) + f"] {run.progress:.0%}")
    if run.step is not None:
        parts.append(f"step {run.step}" + (f"/{run.total_steps}" if run.total_steps is not None else ""))
    if run.eta_s is not None:
        parts.append(f"eta {_duration(run.eta_s)}")
    if run.loss is not None:
        parts.append(f"loss {run.loss:.4g}")
    if run.learning_rate is not None:
        parts.append(f"lr {run.learning_rate:.2e}")
    if run.restarts:
        parts.append(f"restarts {len(run.restarts)}")
    if run.stop_requested and run.finished is None:
        parts.append("stopping")
    return " ".join(parts)


def describe(event: Any) -> str | None:
    """A plain line for an event of interest; None for the others (heartbeats, unknown events)."""
    name = event.event
    if name == "run.started":
        total = "unknown" if event.total_steps is None else event.total_steps
        return f"run started by {event.producer.name} {event.producer.version}, total steps {total}"
    if name == "phase.started":
        return f"phase {event.phase} started"
    if name == "phase.ended":
        return f"phase {event.phase} {event.status} in {_duration(event.duration_s)}"
    if name == "train.step":
        text = f"step {event.step}" + (f"/{event.total_steps}" if event.total_steps is not None else "")
        if event.progress is not None:
            text += f" ({event.progress:.0%})"
        if event.loss is not None:
            text += f" loss {event.loss:.4g}"
        if event.learning_rate is not None:
            text += f" lr {event.learning_rate:.2e}"
        if event.eta_s is not None:
            text += f" eta {_duration(event.eta_s)}"
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
        return f"trial {event.trial} {event.status} in {_duration(event.duration_s)}" + _metrics(event.metrics)
    if name == "stop.requested":
        who = f" by {event.requested_by}" if event.requested_by else ""
        why = f": {event.reason}" if event.reason else ""
        source = event.signal or event.source
        return f"stop requested ({source}){who}{why}"
    if name == "run.finished":
        return f"run finished: {event.status}" + (f" at step {event.step}" if event.step is not None else "") + f" in {_duration(event.duration_s)}"
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


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f}s"
    whole = int(seconds)
    return f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"


def _now_us() -> int:
    return to_timestamp_us(datetime.now(timezone.utc))
