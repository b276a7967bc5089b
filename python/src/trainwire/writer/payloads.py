"""The payloads of the events written during a run, from the checked arguments of `Run`'s
methods: None where the event cannot be written (the complaint says why)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from trainwire.contract.limits import clip
from trainwire.writer.arguments import CHECKPOINT_REASONS, RESTART_REASONS, STOP_SIGNALS, STOP_SOURCES, Arguments
from trainwire.writer.fields import UNSET, ErrorLike, clean_metrics, error_info
from trainwire.writer.paths import PathLike, checkpoint_field, relative_path

__all__ = [
    "checkpoint_payload",
    "eval_payload",
    "restart_reason",
    "restart_sizes",
    "rolled_back_payload",
    "stop_payload",
    "trial_ended_payload",
]

logger = logging.getLogger("trainwire.writer")


def eval_payload(
    args: Arguments, step: Any, metrics: Mapping[str, Any] | None, epoch: Any, split: Any
) -> dict[str, Any] | None:
    counted = args.counts("eval.completed", step=(step, 0))
    if counted is None:
        return None
    if not isinstance(split, str) or not 1 <= len(split) <= 128:
        args.complain(
            "eval.completed.split", f"split {split!r} is not a name of 1 to 128 characters; eval.completed not written"
        )
        return None
    return {
        "step": counted["step"],
        "epoch": args.number("eval.completed", "epoch", epoch, 0),
        "split": split,
        "metrics": clean_metrics(metrics, args.complain),
    }


def checkpoint_payload(
    args: Arguments, output_dir: str | None, step: Any, path: PathLike, reason: Any
) -> dict[str, Any] | None:
    """`checkpoint.saved`, or None when the path is outside the output directory (writer
    rule 9: a WARNING, the event is dropped)."""
    counted = args.counts("checkpoint.saved", step=(step, 0))
    if counted is None:
        return None
    if not args.one_of(
        "checkpoint.saved.reason", "checkpoint reason", reason, CHECKPOINT_REASONS, "checkpoint.saved not written"
    ):
        return None
    relative = relative_path(path, output_dir)
    if relative is None:
        logger.warning("trainwire: checkpoint %s is outside the output directory; not written", path)
        return None
    return {"step": counted["step"], "path": relative, "reason": reason}


def restart_reason(args: Arguments, reason: str) -> str:
    """The `train.restarted` reason: `other` for one the contract does not know."""
    if reason not in RESTART_REASONS:
        args.complain(
            "train.restarted.reason", f"restart reason {reason!r} is not 'oom' or 'other'; written as 'other'"
        )
        return "other"
    return reason


def restart_sizes(args: Arguments, batch_size_from: Any, batch_size_to: Any) -> dict[str, int | None]:
    """The batch sizes of `train.restarted` that were given (not `UNSET`)."""
    sizes = {}
    if batch_size_from is not UNSET:
        sizes["batch_size_from"] = args.optional_int("train.restarted", "batch_size_from", batch_size_from, 1)
    if batch_size_to is not UNSET:
        sizes["batch_size_to"] = args.optional_int("train.restarted", "batch_size_to", batch_size_to, 1)
    return sizes


def trial_ended_payload(
    args: Arguments,
    counted: Mapping[str, int],
    status: str,
    duration_s: float,
    metrics: Mapping[str, Any] | None,
    error: ErrorLike,
    best: Mapping[str, Any] | None,
    accepted: bool | None = None,
) -> dict[str, Any]:
    """`trial.ended` for a trial and attempt already counted (`Arguments.counts`)."""
    payload: dict[str, Any] = {
        "trial": counted["trial"],
        "attempt": counted["attempt"],
        "status": status,
        "duration_s": duration_s,
        "metrics": clean_metrics(metrics, args.complain),
        "error": error_info(error),
    }
    if best is not None:
        payload["best"] = dict(best)
    if accepted is not None:
        payload["accepted"] = bool(accepted)
    return payload


def rolled_back_payload(
    args: Arguments,
    output_dir: str | None,
    previous_step: Any,
    step: Any,
    checkpoint: PathLike | None,
    reason: str | None,
) -> dict[str, Any] | None:
    """`train.rolled_back`, or None when a step is not a count; a checkpoint outside the
    output directory is null (writer rule 9)."""
    counted = args.counts("train.rolled_back", previous_step=(previous_step, 0), step=(step, 0))
    if counted is None:
        return None
    return {**counted, "checkpoint": checkpoint_field(checkpoint, output_dir), "reason": clip(reason)}


def stop_payload(
    args: Arguments,
    source: Any,
    signal: Any,
    reason: str | None,
    requested_by: str | None,
    criterion: str | None = None,
) -> dict[str, Any] | None:
    """`stop.requested`, or None for an unknown source; an unknown signal is null; the
    `criterion` of a stop the run asked for itself (`Run.stop_for`) when given."""
    if not args.one_of("stop.requested.source", "stop source", source, STOP_SOURCES, "stop.requested not written"):
        return None
    if signal is not None and not args.one_of(
        "stop.requested.signal", "signal", signal, STOP_SIGNALS, "written as null"
    ):
        signal = None
    payload = {"source": source, "signal": signal, "reason": clip(reason), "requested_by": clip(requested_by)}
    if criterion is not None:
        payload["criterion"] = clip(criterion)
    return payload
