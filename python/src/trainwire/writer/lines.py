"""Envelope and sequencing: every line starts as a copy of the run's envelope, gets the
next `seq` and its `ts` when it is written, and goes to every sink at once. A throttled
`train.step` is kept pending and written, with the time it was reported, before any later
line (writer rule 5).

Every line is kept under the readers' line limit and checked as a reader checks it before
it is written; `train.step` lines, made only from checked values, skip that check (the
per-step path stays cheap) unless the run is strict."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from trainwire._generated.contract import ENVELOPE_FIELDS
from trainwire.contract.clock import format_ts
from trainwire.writer.checks import Complaints
from trainwire.writer.encoding import encode_line
from trainwire.writer.line_check import LINE_LIMIT, cut_to_fit, line_problem
from trainwire.writer.sinks import Dispatcher

__all__ = ["LineWriter"]

#: the longest encoded line, its `\n` included
_LONGEST_LINE = LINE_LIMIT + 1

logger = logging.getLogger("trainwire.writer")


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
        self._pending: tuple[dict[str, Any], float, float] | None = None  # line, now(), monotonic()
        #: called with each held step a later step superseded (it never reaches the stream)
        self.left_out: Callable[[dict[str, Any]], None] | None = None
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

        No step is left pending after it: the run writes the pending step first
        (`flush_pending`), and a fresh step supersedes it."""
        pending = self._pending
        if pending is not None:
            self._pending = None
            if pending[0] is not line and self.left_out is not None:
                self.left_out(pending[0])
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

    def hold(self, line: dict[str, Any], reported_mono: float) -> None:
        """Keeps a throttled step with the time it was reported; any later line writes it first."""
        if self._pending is not None and self.left_out is not None:
            self.left_out(self._pending[0])
        self._pending = (line, self._now(), reported_mono)

    def flush_pending(self) -> float | None:
        """Writes the pending step, if any: the monotonic time it was reported, else None."""
        if self._pending is None:
            return None
        line, reported_at, reported_mono = self._pending
        self.write(line, reported_at)
        return reported_mono

    def close(self) -> None:
        self._dispatcher.close()
