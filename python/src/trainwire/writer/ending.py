"""How a run ends: the status and reason of `run.finished` as the contract takes them, its
payload and the fallback that ends the run anyway, and the ending of a block that raised."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from trainwire.contract.errors import RunInterrupted
from trainwire.contract.status import EXIT_CODES, status_for_exception
from trainwire.writer.arguments import FINISH_REASONS, Arguments
from trainwire.writer.fields import ErrorLike, clean_metrics, error_info
from trainwire.writer.paths import PathLike, artifact_paths, checkpoint_field

__all__ = ["checked_ending", "ending_for", "finished_payload", "required_finished"]


def checked_ending(
    args: Arguments, status: str, error: ErrorLike, reason: str | None, stop_reason: str | None
) -> tuple[str, ErrorLike, str | None]:
    """`(status, error, reason)` as written: an unknown status ends the run as failed (the
    error says why), an interrupted run without a reason takes its stop's, an unknown
    reason is null."""
    if not args.one_of("run.finished.status", "run status", status, EXIT_CODES, "the run is finished as failed"):
        error = error if error is not None else ("ValueError", f"finish() was given the unknown status {status!r}")
        status = "failed"
    if reason is None and status == "interrupted":
        reason = stop_reason
    if reason is not None and not args.one_of(
        "run.finished.reason", "finish reason", reason, FINISH_REASONS, "written as null"
    ):
        reason = None
    return status, error, reason


def finished_payload(
    args: Arguments,
    output_dir: str | None,
    *,
    status: str,
    error: ErrorLike,
    reason: str | None,
    step: int | None,
    checkpoint: PathLike | None,
    duration_s: float,
    metrics: Mapping[str, Any] | None,
    artifacts: Mapping[str, PathLike] | None,
    exit_code: int | None,
) -> dict[str, Any]:
    """The fields of `run.finished` for a checked ending (`checked_ending`); `exit_code` is
    the host's own code, or None for the status's (writer rule 11)."""
    return {
        "status": status,
        "exit_code": EXIT_CODES.get(status) if exit_code is None else exit_code,
        "error": error_info(error),
        "reason": reason,
        "step": step,
        "checkpoint": checkpoint_field(checkpoint, output_dir),
        "duration_s": duration_s,
        "metrics": clean_metrics(metrics, args.complain),
        "artifacts": artifact_paths(artifacts, output_dir),
    }


def required_finished(payload: Mapping[str, Any]) -> dict[str, Any]:
    """`run.finished` when the full line cannot be written: the run must still end, with
    its status and what cannot be wrong."""
    return {**payload, "error": None, "reason": None, "checkpoint": None, "metrics": {}, "artifacts": {}}


def ending_for(error: BaseException | None, stop_reason: str | None) -> tuple[str, dict[str, Any]]:
    """The status and the `finish()` arguments for a block that ended with `error`
    (`status_for_exception`): an interrupted run takes the stop's reason, a failed one the
    error."""
    status = status_for_exception(error)
    if status == "interrupted":
        reason = error.reason if isinstance(error, RunInterrupted) else (stop_reason or "sigint")
        return "interrupted", {"reason": reason}
    if status == "failed":
        if isinstance(error, SystemExit):  # the process exits with the code sys.exit() was given
            return "failed", {"error": error, "exit_code": error.code if isinstance(error.code, int) else 1}
        return "failed", {"error": error}
    return "succeeded", {}
