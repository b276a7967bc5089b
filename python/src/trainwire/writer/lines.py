"""Envelope and sequencing: every line starts as a copy of the run's envelope, gets the
next `seq` and its `ts` when it is written, and goes to every sink at once. A throttled
`train.step` (or `phase.progress`) is kept pending, one per owner (a trial's steps, a phase's
count), and written, with the time it was reported, before any later line (writer rule 5).

Every line is kept under the readers' line limit and checked as a reader checks it before
it is written; `train.step` lines, made only from checked values, skip that check (the
per-step path stays cheap) unless the run is strict."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Protocol

from trainwire._generated.contract import ENVELOPE_FIELDS
from trainwire.contract.clock import format_ts
from trainwire.writer.checks import Complaints
from trainwire.writer.encoding import encode_line
from trainwire.writer.line_check import LINE_LIMIT, cut_to_fit, line_problem
from trainwire.writer.sinks import Dispatcher

__all__ = ["LineWriter", "Throttled"]

#: the longest encoded line, its `\n` included
_LONGEST_LINE = LINE_LIMIT + 1

logger = logging.getLogger("trainwire.writer")


class Throttled(Protocol):
    """The owner of a pending line: when it was last written (monotonic seconds)."""

    last_written: float


class LineWriter:
    """Stamps and writes the lines of one run. Not thread-safe: the run holds its lock."""

    def __init__(
        self,
        run_id: str,
        stage: dict[str, Any] | None,
        dispatcher: Dispatcher,
        now: Callable[[], float],
        monotonic: Callable[[], float],
        complaints: Complaints | None = None,
    ) -> None:
        # seq, ts and event are filled in when the line is written
        values = {"schema_version": 1, "seq": 0, "ts": "", "run_id": run_id, "event": "", "stage": stage}
        # key order is the schema's; an absent stage is left out, never written as null
        self._envelope: dict[str, Any] = {key: values[key] for key in ENVELOPE_FIELDS if values[key] is not None}
        self._dispatcher = dispatcher
        self._now = now
        self._monotonic = monotonic
        self._seq = 0
        self._complaints = complaints if complaints is not None else Complaints()
        self._check_steps = self._complaints.strict
        # owner -> (line, now(), monotonic()), in the order reported (so ts never goes back)
        self._pending: dict[Throttled, tuple[dict[str, Any], float, float]] = {}
        #: called with each held step a later step of its owner superseded (it never reaches the
        #: stream) and the time it was reported
        self.left_out: Callable[[dict[str, Any], float], None] | None = None
        #: called just before `run.finished` is written: what must be on disk when a reader sees it
        self.before_finished: Callable[[], None] | None = None
        #: monotonic time of the last line written (the heartbeat's idle clock)
        self.last_write = monotonic()

    def new_line(self, event: str) -> dict[str, Any]:
        """A fresh line of `event`, the envelope filled in but for `seq` and `ts`."""
        line = self._envelope.copy()
        line["event"] = event
        return line

    def write(self, line: dict[str, Any], at: float | None = None) -> bool:
        """Writes `line` stamped with the next `seq` and `ts` (now, or `at`). False when it
        was not written: it could not be encoded, fit the limit, or pass the reader's checks.

        The caller writes the pending lines first (`flush_pending`, `write_fresh`)."""
        seq = self._seq = self._seq + 1
        line["seq"] = seq
        line["ts"] = format_ts(self._now() if at is None else at)
        try:
            encoded = encode_line(line)
            if len(encoded) > _LONGEST_LINE:
                line, encoded = self._cut(line)
                problem = line_problem(encoded)
            elif self._check_steps or line["event"] != "train.step":
                problem = line_problem(encoded)
            else:
                problem = None
        except Exception as error:
            encoded, problem = b"", f"it could not be encoded ({type(error).__name__}: {error})"
        if problem is not None:
            self._seq -= 1  # nothing was written: keep seq gap-free
            event = line["event"]
            self._complaints(f"invalid {event}", f"{event} is not written: {problem}")
            return False
        if self.before_finished is not None and line["event"] == "run.finished":
            self.before_finished()
        self._dispatcher.dispatch(encoded, line)
        self.last_write = self._monotonic()
        return True

    def _cut(self, line: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        fitted = cut_to_fit(line, encode_line)
        if fitted is None:
            raise ValueError(f"the line cannot be cut under the limit of {LINE_LIMIT} bytes")
        cut_line, encoded, cuts = fitted
        self._complaints.warn_once(
            "line cut", f"{line['event']}: {', '.join(cuts)} cut to keep the line under {LINE_LIMIT} bytes"
        )
        return cut_line, encoded

    def hold(self, line: dict[str, Any], reported_mono: float, owner: Throttled) -> None:
        """Keeps a throttled line of `owner` with the time it was reported, in place of the
        owner's earlier one; any later line writes it first."""
        self._supersede(owner)  # re-inserted last: the pending lines stay in report order
        self._pending[owner] = (line, self._now(), reported_mono)

    def _supersede(self, owner: Throttled) -> None:
        """Drops `owner`'s pending line; a step dropped so goes to `left_out`."""
        superseded = self._pending.pop(owner, None)
        if superseded is not None and self.left_out is not None and superseded[0]["event"] == "train.step":
            self.left_out(superseded[0], superseded[1])  # with the time it was reported

    def write_fresh(self, line: dict[str, Any], owner: Throttled) -> None:
        """Writes a due line of `owner`: its pending line is superseded, the others' go first."""
        if self._pending:
            self._supersede(owner)
            self.flush_pending()
        self.write(line)

    def flush_pending(self) -> None:
        """Writes the pending lines, each with the time it was reported, which becomes its
        owner's `last_written`."""
        while self._pending:
            owner = next(iter(self._pending))
            line, reported_at, reported_mono = self._pending.pop(owner)
            self.write(line, reported_at)
            owner.last_written = reported_mono

    def close(self) -> None:
        self._dispatcher.close()
