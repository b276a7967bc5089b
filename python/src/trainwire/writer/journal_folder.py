"""The journal's fold, off the training thread: a run's summary and series snapshot folded from
the files it wrote (the stream from where the run began, the step file's records put back),
on a thread of its own, when a save is due; and the steps the throttle left out appended to
the step file (`writer.step_file`) within `bound_s` of being kept.

The training thread only hands over: each kept step (a deque append; the thread is woken by
the first of a batch) and a save with the stream's size at that moment (the end of the line
just written). The fold reads the stream up to that size, so a step the throttle leaves out
later is never folded before a line it came after. At the run's start and end the training
thread waits for this thread and saves itself, so the documents are whole when `finish()`
returns; it never waits for a thread that has not moved on for `WAIT_S` (a file system that
hangs): it goes on without it, and the steps it could not hand over are counted as lost.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

from pydantic_core import from_json

from trainwire.contract.files import open_regular
from trainwire.contract.layout import NOTES_FILE, STEPS_FILE
from trainwire.journal.fold import RunJournalFold, write_snapshot
from trainwire.journal.notes import count_notes
from trainwire.journal.replay import JournalReplay
from trainwire.lines.summary import write_summary
from trainwire.writer.step_file import MAX_UNWRITTEN_RECORDS, StepFileWriter

__all__ = ["MAX_WAITING_RECORDS", "WAIT_S", "JournalFolder", "NotWritten"]

logger = logging.getLogger("trainwire.writer.journal")

#: the longest the training thread waits for the journal's thread while it does not move on
WAIT_S = 1.0
#: kept steps waiting for the thread before the training thread waits (then drops, counted)
MAX_WAITING_RECORDS = MAX_UNWRITTEN_RECORDS
#: seconds between two tries of a step file that failed
RETRY_S = 1.0
#: kept steps appended in one write
_WRITE_BATCH = 512
#: the stream is read in pieces of this size
_CHUNK_BYTES = 1 << 20

_STOP = object()
_KEPT = object()  # kept steps wait: append them within the bound


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
    of `journal_dir` into `fold`, and saves the summary and the snapshot; appends the kept
    steps to the step file at most `bound_s` after they were handed over."""

    def __init__(
        self,
        stream: Path,
        start: int,
        journal_dir: Path,
        fold: RunJournalFold,
        not_written: NotWritten,
        *,
        bound_s: float = 1.0,
    ) -> None:
        self._stream = stream
        self._not_written = not_written
        self._journal_dir = journal_dir
        self._bound_s = bound_s
        self._steps = StepFileWriter(journal_dir / STEPS_FILE, fold.run_id)
        self._replay = JournalReplay(fold, journal_dir / STEPS_FILE, follow_links=False)
        self._offset = start  # the stream's bytes folded: the end of the last whole line
        self._lock = threading.Lock()  # one fold at a time: this thread's, or the caller's at start and end
        self._tasks: queue.Queue[Any] = queue.Queue()
        self._kept: deque[dict[str, Any]] = deque()  # appended by the training thread, taken by this one
        self._drained = threading.Condition()
        self._progress = 0  # batches and tasks this thread finished: it moves on
        self._stuck = False  # the training thread waited for room in vain: it drops until the thread drains
        self._dropped = 0  # kept steps the training thread could not hand over
        self._appended = 0  # kept steps handed over (by the training thread)
        self._taken = 0  # kept steps taken from `_kept` (by this thread)
        self._marks: deque[tuple[int, float]] = deque()  # (handed over, when): once a batch
        self._thread: threading.Thread | None = None
        #: the stream part of the run's completeness as the training thread last saw it (None
        #: while the stream lost nothing; the stream cannot say what it lacks)
        self.stream_loss: dict[str, Any] | None = None
        #: the run's `run.started` and `run.finished` as the writer dispatched them: the summary
        #: of a stream that lost them still says how the run began and ended
        self.run_ends: list[dict[str, Any]] = []
        #: the steps the run logged: its stream's `train.step` lines and the steps kept (the journal counts)
        self.steps_logged = 0
        self._saved_summary: dict[str, Any] | None = None  # the summary last written
        self._saved_covers: tuple[int, int] | None = None  # the stream's and step file's bytes of the last snapshot

    # -- called by the training thread ------------------------------------------------------

    def keep(self, record: dict[str, Any]) -> None:
        """A step the throttle left out, for the step file."""
        kept = self._kept
        if len(kept) >= MAX_WAITING_RECORDS and not self._wait_for_room():
            self._dropped += 1
            return
        kept.append(record)
        waiting = len(kept)
        if waiting == 1 or waiting == _WRITE_BATCH:  # written within the bound, or at once when a batch is full
            self._send(_KEPT)
        self._appended += 1
        if self._appended % _WRITE_BATCH == 0:
            self._hold_back()

    def request_save(self, stream_size: int) -> None:
        """A save of everything up to byte `stream_size` of the stream, on this thread."""
        self._send(("save", stream_size))

    def settle(self) -> bool:
        """Waits until every kept step handed over is in the step file (or failed) and every
        save asked for done; False when the thread did not move on for `WAIT_S` (given up)."""
        if self._thread is None:
            return True
        done = threading.Event()
        self._tasks.put(("settle", done))
        return self._wait(done)

    def save_now(self, stream_size: int, *, last: bool = False) -> None:
        """Waits for the thread (while it moves on), then folds and saves on the calling
        thread; `last`: the run ends, what the step file could not take is lost."""
        settled = self.settle()
        if not (settled and self._lock.acquire(timeout=WAIT_S)):
            self._not_written("the journal", TimeoutError(f"its thread did not move on for {WAIT_S:g} s"))
            return
        try:
            self._write_kept()
            if last:
                left, self._kept = len(self._kept), deque()
                self._steps.give_up(left)
            self._save(stream_size, write=True)
        finally:
            self._lock.release()

    def close(self, stream_size: int) -> None:
        """Saves on the calling thread and ends the folding thread."""
        self.save_now(stream_size, last=True)
        if self._thread is not None:
            self._tasks.put(_STOP)
            self._thread.join(WAIT_S)  # a thread stuck in a file system is a daemon: left behind
            self._thread = None

    def completeness(self) -> dict[str, Any] | None:
        """The summary's `completeness`: the stream's part as the run saw it and the kept steps
        this thread could not write; None while nothing was lost."""
        kept_lost = self._steps.lost + self._dropped
        if not kept_lost and self.stream_loss is None:
            return None
        counts = dict(self.stream_loss or {"stream_lines": 0, "stream_lines_lost": 0, "reason": None})
        counts["steps_logged"] = self.steps_logged
        counts["kept_steps_lost"] = kept_lost
        if counts.get("reason") is None and kept_lost:
            counts["reason"] = self._steps.reason or (
                f"{self._dropped} kept step(s) dropped: the journal's thread did not move on"
            )
        return counts

    def _send(self, task: Any) -> None:
        if self._thread is None:  # started with the first hand-over: a run that never steps has none
            self._thread = threading.Thread(target=self._work, name="trainwire-journal", daemon=True)
            self._thread.start()
        self._tasks.put(task)

    def _wait_for_room(self) -> bool:
        if not self._stuck:
            with self._drained:
                self._drained.wait_for(lambda: len(self._kept) < MAX_WAITING_RECORDS, WAIT_S)
        self._stuck = len(self._kept) >= MAX_WAITING_RECORDS
        return not self._stuck

    def _hold_back(self) -> None:
        """Once a batch: when the oldest batch still waiting for the thread waited longer than
        the bound (a thread slower than training), waits for the thread to take it, at most
        `WAIT_S`; a thread that did not take it by then is not waited for again until it moves."""
        now = time.monotonic()
        marks = self._marks
        marks.append((self._appended, now))
        while marks and marks[0][0] <= self._taken:
            marks.popleft()
        if not marks or now - marks[0][1] <= self._bound_s or self._stuck:
            return
        oldest = marks[0][0]
        with self._drained:
            self._stuck = not self._drained.wait_for(lambda: self._taken >= oldest, WAIT_S)

    def _wait(self, done: threading.Event) -> bool:
        while True:
            seen = self._progress
            if done.wait(WAIT_S):
                return True
            if self._progress == seen:
                return False

    # -- the folding thread -----------------------------------------------------------------

    def _work(self) -> None:
        due: float | None = None  # when the kept steps waiting (or a failed batch) are written
        while True:
            timeout = None if due is None else max(0.0, due - time.monotonic())
            try:
                task = self._tasks.get(timeout=timeout)
            except queue.Empty:
                task = None
            if task is _STOP:
                return
            now = time.monotonic()
            if task is _KEPT and len(self._kept) < _WRITE_BATCH:
                due = now + self._bound_s if due is None else min(due, now + self._bound_s)
            elif task is not None or (due is not None and now >= due):
                self._do(task)
                now = time.monotonic()
                due = now + RETRY_S if self._steps.unwritten else now + self._bound_s if self._kept else None

    def _do(self, task: Any) -> None:
        """Writes the kept steps waiting, then does `task`: a ("save", size), a ("settle",
        event), or nothing (the kept steps were due)."""
        kind, value = task if isinstance(task, tuple) else (None, None)
        try:
            with self._lock:
                self._write_kept()
                if kind == "save":  # a later save in the queue writes the files: this one only folds
                    self._save(value, write=self._tasks.empty())
        except Exception as error:  # the journal is a view: it never takes the run down
            self._not_written("the journal", error)
        finally:
            self._progress += 1
            if kind == "settle":
                value.set()

    # -- under the lock ---------------------------------------------------------------------

    def _write_kept(self) -> None:
        """Appends the kept steps handed over to the step file, `_WRITE_BATCH` a write (a
        batch that failed first); on a failure the rest waits for the next try."""
        kept = self._kept
        try:
            if self._steps.unwritten:
                self._steps.append(())
            while kept:
                batch = [kept.popleft() for _ in range(min(_WRITE_BATCH, len(kept)))]
                self._taken += len(batch)
                self._wake_training()
                self._steps.append(batch)
                self._progress += 1
        except OSError as error:  # the batch is kept in memory and tried again
            self._not_written("the step file", error)

    def _wake_training(self) -> None:
        with self._drained:
            self._stuck = False
            self._drained.notify_all()

    def _save(self, stream_size: int, *, write: bool) -> None:
        self._fold_to(stream_size)
        if not write:
            return
        fold = self._replay.fold
        fold.summary.notes = count_notes(self._journal_dir / NOTES_FILE)  # `trainwire note` may add some
        fold.summary.completeness = self.completeness()
        summary = fold.summary.summary()
        if self.stream_loss is not None:
            summary = self._with_lost_ends(summary)
        if summary is None:
            return
        self._journal_dir.mkdir(parents=True, exist_ok=True)
        if summary != self._saved_summary:
            write_summary(self._journal_dir, summary)
            self._saved_summary = summary
        covered = (self._offset, self._replay.kept_offset)
        if covered != self._saved_covers:  # the snapshot changes only with what it covers
            write_snapshot(self._journal_dir, fold.snapshot(*covered))
            self._saved_covers = covered

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
        reader decodes them (a NaN written as null is None), without the reader's checks. The
        stream is opened as any file of the directory: a regular file, not through a link."""
        replay = self._replay
        if self._offset >= stream_size:  # nothing new (a stream that lost every line is never opened)
            replay.put_back_last()
            return
        with open_regular(self._stream, follow_links=False) as stream:
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
