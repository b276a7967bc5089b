"""What a run's stream lost (writer rule 3): the lines that a sink carrying the stream (the
stream file, NDJSON on standard output) could not take, and why. Training never hears of it
and its outcome does not change: the loss is one WARNING when it happens, one line at the
run's end, and the `completeness` of the run's summary when its journal can be written."""

from __future__ import annotations

import errno
from dataclasses import dataclass
from typing import Any

__all__ = [
    "StreamLoss",
    "StreamLost",
    "carries_stream",
    "completeness",
    "loss_summary",
    "may_come_back",
    "stream_place",
]

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
    """Where a stream sink writes, as people read it (a path, "standard output")."""
    return str(getattr(sink, "where", None) or "the stream")


def may_come_back(error: BaseException) -> bool:
    """Whether a stream sink that failed with `error` is kept for the next line."""
    return isinstance(error, OSError) and error.errno in _SPACE_ERRORS


def why(error: BaseException) -> str:
    """Why a write failed, as the system says it ("No space left on device")."""
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
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
    made_whole: int = 0  # failed lines all but whose `\n` landed, ended by a later line's `\n`

    @classmethod
    def of(cls, where: str, error: BaseException) -> StreamLoss:
        return cls(where, why(error))

    def lost(self, dispatched: int) -> int:
        """Lines lost out of the `dispatched` ones."""
        return self.failed - self.made_whole + (dispatched - self.dropped_at if self.dropped_at is not None else 0)

    def said(self, dispatched: int) -> str:
        """`N of M lines lost in <where> (<reason>)`, with whether the stream came back."""
        back = "; written again later" if self.came_back else ""
        return f"{self.lost(dispatched)} of {dispatched} lines lost in {self.where} ({self.reason}{back})"


def completeness(losses: list[StreamLoss], dispatched: int) -> dict[str, Any] | None:
    """The stream part of a run's completeness (summary.json's `completeness`), None when
    nothing was lost. With two stream sinks (the file and standard output) the one that lost
    most counts; `reason` is the first loss."""
    if not losses:
        return None
    first = losses[0]
    return {
        "stream_lines": dispatched,
        "stream_lines_lost": max(loss.lost(dispatched) for loss in losses),
        "steps_logged": 0,
        "kept_steps_lost": 0,
        "reason": f"stream lines lost in {first.where} ({first.reason})",
    }


def loss_summary(run_id: str, losses: list[StreamLoss], dispatched: int, status: str, exit_code: int | None) -> str:
    """The one line said at the end of a run whose stream lost lines."""
    said = "; ".join(loss.said(dispatched) for loss in losses)
    return f"trainwire: run {run_id} {status} (exit code {exit_code}), but its stream is incomplete: {said}"
