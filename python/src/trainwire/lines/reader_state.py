"""The reader state (schemas/reader-state/v1) of a run-state fold: what `StreamReader.to_dict`
gives, and a stream opened from its journal's snapshots (`journal.opening`) too, so both are
one document."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from trainwire.contract.clock import to_timestamp_us
from trainwire.lines.diagnostics import DiagnosticLog
from trainwire.lines.state_fold import RunStateFold

__all__ = ["Now", "reader_state"]

Now = str | datetime | None


def reader_state(
    fold: RunStateFold,
    *,
    lines: int,
    consumed_bytes: int,
    partial_tail_bytes: int,
    now: Now = None,
    stale_after_s: float | None = None,
) -> dict[str, Any]:
    """The reader state (schemas/reader-state/v1) of `fold`'s runs after `consumed_bytes`
    (`StreamReader.to_dict`, and a stream opened from its snapshots)."""
    now_us = None if now is None else to_timestamp_us(now)
    diagnostics = fold.diagnostics
    dropped = diagnostics.dropped if isinstance(diagnostics, DiagnosticLog) else 0
    return {
        "runs": [run.to_dict(now_us, stale_after_s) for run in fold.runs.values()],
        "lines": lines,
        "consumed_bytes": consumed_bytes,
        "partial_tail_bytes": partial_tail_bytes,
        "unknown_events": fold.unknown_events,
        "diagnostics": [diagnostic.to_dict() for diagnostic in diagnostics],
        # only when some were dropped: a state within the limit is unchanged by the bound
        **({"diagnostics_dropped": dropped} if dropped else {}),
    }
