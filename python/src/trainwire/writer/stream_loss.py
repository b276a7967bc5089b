"""What a run's stream lost (writer rule 3): the lines that a sink carrying the stream (the
stream file, NDJSON on standard output) could not take, and why. Training never hears of
it; the run's end does: a run whose stream lost a line is never called a success."""

from __future__ import annotations

import errno
from dataclasses import dataclass
from typing import Any

from trainwire.contract.status import EXIT_CODES

__all__ = [
    "STREAM_LOST",
    "StreamLoss",
    "StreamLost",
    "carries_stream",
    "ending_after_loss",
    "loss_summary",
    "may_come_back",
    "stream_place",
]

#: the error type of a `run.finished` that says its stream lost lines (and of `StreamLost`)
STREAM_LOST = "StreamLost"

#: errors after which a later write may succeed (space freed, a quota or a size limit raised):
#: a stream sink failing so is kept. After any other (a closed descriptor, a broken pipe) it is
#: dropped: writing again could reach whatever file reuses the descriptor.
_SPACE_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


class StreamLost(OSError):
    """Raised by a strict run (`Run(strict=True)`, for tests) at the first line its stream
    could not take (its first line when its stream file could not be opened)."""


def carries_stream(sink: object) -> bool:
    """Whether `sink` writes the run's NDJSON stream (its class sets `carries_stream = True`)."""
    return getattr(sink, "carries_stream", False) is True


def stream_place(sink: object) -> str:
    """Where a stream sink writes, as a summary names it."""
    return str(getattr(sink, "where", None) or repr(sink))


def may_come_back(error: BaseException) -> bool:
    """Whether a stream sink that failed with `error` is kept for the next line."""
    return isinstance(error, OSError) and error.errno in _SPACE_ERRORS


def _reason(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


@dataclass
class StreamLoss:
    """The lines one stream sink lost: those whose write failed, and every line after it was
    dropped (`dropped_at`, the dispatcher's line count then)."""

    where: str
    reason: str
    failed: int = 0
    dropped_at: int | None = None
    came_back: bool = False  # a line was written after one was lost

    @classmethod
    def of(cls, where: str, error: BaseException) -> StreamLoss:
        return cls(where, _reason(error))

    def lost(self, dispatched: int) -> int:
        """Lines lost out of the `dispatched` ones."""
        return self.failed + (dispatched - self.dropped_at if self.dropped_at is not None else 0)

    def said(self, dispatched: int) -> str:
        """`N of M lines lost in <where> (<reason>)`, with whether the stream came back."""
        back = "; written again later" if self.came_back else ""
        return f"{self.lost(dispatched)} of {dispatched} lines lost in {self.where} ({self.reason}{back})"


def ending_after_loss(
    status: str, error: Any, exit_code: int | None, losses: list[StreamLoss], dispatched: int
) -> tuple[str, Any, int | None]:
    """`(status, error, exit_code)` of a run whose stream lost lines: an ending whose code is
    0 (the status's, or the host's own `exit_code`) becomes `failed` with a `StreamLost` error
    naming the loss, and the status's code; any other ending already says it did not succeed."""
    code = EXIT_CODES.get(status) if exit_code is None else exit_code
    if not losses or code != 0:
        return status, error, exit_code
    message = "; ".join(loss.said(dispatched) for loss in losses)
    return "failed", (STREAM_LOST, f"the stream lost lines: {message}"), None


def loss_summary(run_id: str, losses: list[StreamLoss], dispatched: int, status: str, exit_code: int | None) -> str:
    """The one line said at the end of a run whose stream lost lines."""
    said = "; ".join(loss.said(dispatched) for loss in losses)
    return f"trainwire: run {run_id} lost lines of its stream: {said}; the run ends {status}, exit code {exit_code}"
