"""Envelope and sequencing: every line starts as a copy of the run's envelope, gets the
next `seq` and its `ts` when it is written, and goes to every sink at once. A throttled
`train.step` is kept pending and written, with the time it was reported, before any later
line (writer rule 5)."""

from __future__ import annotations

import logging
from typing import Any, Callable

from trainwire._generated.contract import ENVELOPE_FIELDS
from trainwire.contract.clock import format_ts
from trainwire.writer.encoding import encode_line
from trainwire.writer.sinks import Dispatcher

__all__ = ["LineWriter"]

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
    ) -> None:
        # seq, ts and event are filled in when the line is written
        values = {"schema_version": 1, "seq": 0, "ts": "", "run_id": run_id, "event": "", "stage": stage}
        # key order is the schema's; an absent stage is left out, never written as null
        self._envelope: dict[str, Any] = {key: values[key] for key in ENVELOPE_FIELDS if values[key] is not None}
        self._dispatcher = dispatcher
        self._now = now
        self._monotonic = monotonic
        self._seq = 0
        self._pending: tuple[dict[str, Any], float, float] | None = None  # line, now(), monotonic()
        #: monotonic time of the last line written (the heartbeat's idle clock)
        self.last_write = monotonic()

    def new_line(self, event: str) -> dict[str, Any]:
        """A fresh line of `event`, the envelope filled in but for `seq` and `ts`."""
        line = self._envelope.copy()
        line["event"] = event
        return line

    def write(self, line: dict[str, Any], at: float | None = None) -> bool:
        """Writes the pending step first unless `line` replaces it, then `line` stamped with
        the next `seq` and `ts` (now, or `at`). False when it could not be encoded."""
        self._seq += 1
        line["seq"] = self._seq
        line["ts"] = format_ts(self._now() if at is None else at)
        try:
            encoded = encode_line(line)
        except Exception:
            self._seq -= 1  # nothing was written: keep seq gap-free
            logger.warning("trainwire: %s could not be encoded; not written", line["event"], exc_info=True)
            return False
        self._dispatcher.dispatch(encoded, line)
        self.last_write = self._monotonic()
        return True

    def hold(self, line: dict[str, Any], reported_mono: float) -> None:
        """Keeps a throttled step with the time it was reported; any later line writes it first."""
        self._pending = (line, self._now(), reported_mono)

    def drop_pending(self) -> None:
        self._pending = None

    def flush_pending(self) -> float | None:
        """Writes the pending step, if any: the monotonic time it was reported, else None."""
        if self._pending is None:
            return None
        line, reported_at, reported_mono = self._pending
        self._pending = None
        self.write(line, reported_at)
        return reported_mono

    def close(self) -> None:
        self._dispatcher.close()
