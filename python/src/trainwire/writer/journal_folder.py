"""The journal's fold, off the training thread: a run's summary and series snapshot folded from
the files it wrote (the stream from where the run began, the step file's records put back),
on a thread of its own, when a save is due.

The training thread only hands over: the steps its throttle left out, in batches (this
thread appends them to the step file), and a save with the stream's size at that moment
(the end of the line just written). The fold reads the stream up to that size, so a step the
throttle leaves out later is never folded before a line it came after. At the run's start
and end the training thread waits for this thread and saves itself: the documents are
whole when `finish()` returns.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
from pathlib import Path
from typing import Any

from pydantic_core import from_json

from trainwire.contract.layout import NOTES_FILE, STEPS_FILE
from trainwire.contract.notes import count_notes
from trainwire.lines.journal_replay import JournalReplay
from trainwire.lines.kept_steps import encode_kept_steps
from trainwire.lines.run_journal import RunJournalFold, write_snapshot
from trainwire.lines.summary import write_summary

__all__ = ["JournalFolder", "NotWritten"]

logger = logging.getLogger("trainwire.writer.journal")

#: batches waiting for the thread before the training thread waits for it: a bound on memory
_BACKLOG = 64
#: the stream is read in pieces of this size
_CHUNK_BYTES = 1 << 20

_STOP = object()


class NotWritten:
    """Logs a write of the journal that failed: an `OSError` (a full disk, a read-only
    directory) in one line, at WARNING the first time per file kind; anything else, a bug,
    with its traceback."""

    def __init__(self, journal_dir: Path) -> None:
        self._journal_dir = journal_dir
        self._failed: set[str] = set()

    def __call__(self, what: str, error: Exception) -> None:
        if not isinstance(error, OSError):
            logger.warning("trainwire: %s in %s could not be written", what, self._journal_dir, exc_info=error)
            return
        level = logging.DEBUG if what in self._failed else logging.WARNING
        self._failed.add(what)
        logger.log(level, "trainwire: %s in %s could not be written (%s)", what, self._journal_dir, error)


class JournalFolder:
    """Folds run `fold.run_id`'s lines of `stream`, from byte `start` on, and the step file
    of `journal_dir` into `fold`, and saves the summary and the snapshot."""

    def __init__(
        self, stream: Path, start: int, journal_dir: Path, fold: RunJournalFold, not_written: NotWritten
    ) -> None:
        self._stream = stream
        self._not_written = not_written
        self._journal_dir = journal_dir
        self._replay = JournalReplay(fold, journal_dir / STEPS_FILE)
        self._offset = start  # the stream's bytes folded: the end of the last whole line
        self._lock = threading.Lock()  # one fold at a time: this thread's, or the caller's at start and end
        self._tasks: queue.Queue[Any] = queue.Queue(_BACKLOG)
        self._thread: threading.Thread | None = None
        #: the run's completeness as the training thread last saw it (not in the stream)
        self.completeness: dict[str, Any] | None = None
        #: the run's `run.started` and `run.finished` as the writer dispatched them: the summary
        #: of a stream that lost them still says how the run began and ended
        self.run_ends: list[dict[str, Any]] = []

    # -- called by the training thread ------------------------------------------------------

    def hand_over_kept(self, records: list[dict[str, Any]]) -> None:
        """The steps the throttle left out since the last batch, for the step file."""
        self._send(("kept", records))

    def request_save(self, stream_size: int) -> None:
        """A save of everything up to byte `stream_size` of the stream, on this thread."""
        self._send(("save", stream_size))

    def settle(self) -> None:
        """Waits until every batch handed over is in the step file (and every save asked for done)."""
        if self._thread is not None:
            self._tasks.join()

    def save_now(self, stream_size: int) -> None:
        """Waits for the batches handed over, then folds and saves on the calling thread."""
        self.settle()
        with self._lock:
            self._save(stream_size, write=True)

    def close(self, stream_size: int) -> None:
        """Saves on the calling thread and ends the folding thread."""
        self.save_now(stream_size)
        if self._thread is not None:
            self._tasks.put(_STOP)
            self._thread.join()
            self._thread = None

    def _send(self, task: tuple[str, Any]) -> None:
        if self._thread is None:  # started with the first hand-over: a run that never steps has none
            self._thread = threading.Thread(target=self._work, name="trainwire-journal", daemon=True)
            self._thread.start()
        self._tasks.put(task)  # waits when the thread is _BACKLOG batches behind

    # -- the folding thread -----------------------------------------------------------------

    def _work(self) -> None:
        while True:
            task = self._tasks.get()
            try:
                if task is _STOP:
                    return
                kind, value = task
                with self._lock:
                    if kind == "kept":
                        self._append_kept(value)
                    else:  # a later save in the queue writes the files: this one only folds
                        self._save(value, write=self._tasks.empty())
            except Exception as error:  # the journal is a view: it never takes the run down
                self._not_written("the step file" if task[0] == "kept" else "the journal", error)
            finally:
                self._tasks.task_done()

    # -- under the lock ---------------------------------------------------------------------

    def _append_kept(self, records: list[dict[str, Any]]) -> None:
        """Appends the records to the step file in one write of whole lines."""
        data = encode_kept_steps(records)
        self._journal_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self._journal_dir / STEPS_FILE, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            written = os.write(fd, data)
            while written < len(data):
                written += os.write(fd, data[written:])
        finally:
            os.close(fd)

    def _save(self, stream_size: int, *, write: bool) -> None:
        self._fold_to(stream_size)
        if not write:
            return
        fold = self._replay.fold
        fold.summary.notes = count_notes(self._journal_dir / NOTES_FILE)  # `trainwire note` may add some
        fold.summary.completeness = self.completeness
        summary = fold.summary.summary()
        if self.completeness is not None:
            summary = self._with_lost_ends(summary)
        if summary is None:
            return
        self._journal_dir.mkdir(parents=True, exist_ok=True)
        write_summary(self._journal_dir, summary)
        write_snapshot(self._journal_dir, fold.snapshot(self._offset, self._replay.kept_offset))

    def _with_lost_ends(self, summary: dict[str, Any] | None) -> dict[str, Any] | None:
        """The summary once the run's start and end the stream lost are put back (the summary
        only: the series and the state are the stream's)."""
        builder = self._replay.fold.summary
        for line in self.run_ends:
            # a start the stream lost leaves no summary; an end it lost leaves one `running`
            lost = summary is None if line["event"] == "run.started" else _still_running(summary)
            if lost:
                builder.add(line)
                summary = builder.summary()
        return summary

    def _fold_to(self, stream_size: int) -> None:
        """Folds the stream's whole lines up to `stream_size` and the records that came after
        them. The lines are the run's own, each checked before it was written: decoded as a
        reader decodes them (a NaN written as null is None), without the reader's checks."""
        replay = self._replay
        if self._offset >= stream_size:  # nothing new (a stream that lost every line is never opened)
            replay.put_back_last()
            return
        with open(self._stream, "rb") as stream:
            stream.seek(self._offset)
            while self._offset < stream_size:
                chunk = stream.read(min(_CHUNK_BYTES, stream_size - self._offset))
                whole = chunk[: chunk.rfind(b"\n") + 1]
                if not whole:  # a line longer than a piece, or no whole line yet
                    if len(chunk) < _CHUNK_BYTES:
                        break
                    whole = chunk + stream.readline()
                stream.seek(self._offset + len(whole))
                self._offset += len(whole)
                replay.add(self._own_lines(whole))
        replay.put_back_last()

    def _own_lines(self, whole: bytes) -> list[dict[str, Any]]:
        """The run's lines among `whole` lines (a fragment a failed write left is skipped)."""
        run_id = self._replay.fold.run_id
        lines = []
        for raw in whole.split(b"\n")[:-1]:
            try:
                line = from_json(raw) if raw else None
            except ValueError:
                continue
            if isinstance(line, dict) and line.get("run_id") == run_id:
                lines.append(line)
        return lines


def _still_running(summary: dict[str, Any] | None) -> bool:
    return summary is None or summary["status"] == "running"
