"""How a run ends: the exit code of each `run.finished` status, and the reason of a stop.

Shared by the writer (which ends runs), the reader (which reports them) and the stop
control (which interrupts them), so that all three speak the contract's values.
`EXIT_CODES` is generated from conformance/exit-codes.json, the one table of them.
"""

from __future__ import annotations

from trainwire._generated.contract import EXIT_CODES
from trainwire.contract.errors import RunInterrupted

__all__ = ["EXIT_CODES", "STOP_REASONS", "status_for_exception", "stop_reason"]

#: `run.finished.reason` of an interrupted run, by `stop.requested` source (and signal)
STOP_REASONS: dict[str, str] = {
    "control_file": "control_file",
    "api": "api",
    "SIGINT": "sigint",
    "SIGTERM": "sigterm",
    "SIGBREAK": "sigbreak",
}


def stop_reason(source: str, signal: str | None) -> str | None:
    """The `run.finished.reason` a stop from `source` (and `signal`) leads to, if known."""
    return STOP_REASONS.get(signal if source == "signal" and signal else source)


def status_for_exception(error: BaseException | None) -> str:
    """The `run.finished` (and `phase.ended`) status of a block that ended with `error`:
    `succeeded` for none or a clean `SystemExit`, `interrupted` for a honoured stop or
    Ctrl+C, `failed` for anything else."""
    if error is None or (isinstance(error, SystemExit) and error.code in (None, 0)):
        return "succeeded"
    if isinstance(error, (RunInterrupted, KeyboardInterrupt)):
        return "interrupted"
    return "failed"
