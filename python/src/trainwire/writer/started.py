"""The first line of a run: the `run.started` payload from the arguments of `Run.start()`,
and the line with its required fields only, written when the full one cannot be, so that
every run has its first line."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from trainwire.contract.process_proof import this_process
from trainwire.writer.arguments import Arguments, is_run_id
from trainwire.writer.fields import UNSET
from trainwire.writer.paths import checkpoint_field
from trainwire.writer.provenance import collect_provenance
from trainwire.writer.values import BAD, integer, number

__all__ = ["provenance_field", "required_started", "started_payload"]

logger = logging.getLogger("trainwire.writer")


def provenance_field(
    provenance: bool | Mapping[str, Any], seed: int | None, outputs: str | None = None
) -> dict[str, Any] | None:
    """`provenance` of `run.started`: a mapping as given, collected when True (the run's own
    `outputs` directory not counting as a change to the code), and at least the seed when
    there is one."""
    if isinstance(provenance, Mapping):
        return dict(provenance)
    if provenance:
        try:
            return collect_provenance(seed, outputs=outputs)
        except Exception:  # collect_provenance is best effort; be sure anyway
            logger.debug("trainwire: provenance not collected", exc_info=True)
    return {"seed": seed} if seed is not None else None


def started_payload(
    args: Arguments,
    output_dir: str | None,
    *,
    producer: dict[str, Any],
    total_steps: int | None,
    total_epochs: Any,
    config: dict[str, Any] | None,
    provenance: dict[str, Any] | None,
    world_size: Any,
    resumed_from: Any,
    heartbeat_interval_s: float | None,
    total_trials: Any = UNSET,
    objective: Any = None,
    name: str | None = None,
    tags: list[str] | None = None,
    stop_channels: list[str] | None = None,
) -> dict[str, Any]:
    """The fields of `run.started`; `total_epochs`, `resumed_from` and `total_trials` are
    left out when `UNSET`, a field that cannot be taken is left out (or null) with a complaint.
    `name` and `tags` come checked (`Arguments.run_name`, `Arguments.tags`); None leaves them out;
    `stop_channels` is what the run listens to (`run_stop`), left out when empty."""
    payload: dict[str, Any] = {"producer": producer, "total_steps": total_steps}
    if total_epochs is not UNSET:
        epochs = number(total_epochs, minimum=0)
        if epochs is BAD:
            args.complain("run.started.total_epochs", f"total_epochs={total_epochs!r} is not a number >= 0; left out")
        else:
            payload["total_epochs"] = epochs
    if config is not None:
        payload["config"] = config
    if provenance is not None:
        payload["provenance"] = provenance
    if world_size is not None:
        size = integer(world_size, minimum=1)
        if isinstance(size, int):
            payload["world_size"] = size
        else:
            args.complain("run.started.world_size", f"world_size={world_size!r} is not an integer >= 1; left out")
    if resumed_from is not UNSET:
        payload["resumed_from"] = None if resumed_from is None else _resumed_from(args, resumed_from, output_dir)
    if heartbeat_interval_s is not None:
        payload["heartbeat_interval_s"] = heartbeat_interval_s
    if total_trials is not UNSET:
        payload["total_trials"] = args.optional_int("run.started", "total_trials", total_trials)
    if objective is not None:
        declared = _objective(objective)
        if declared is None:
            args.complain("run.started.objective", f"objective={objective!r} is not (name, 'min' or 'max'); left out")
        else:
            payload["objective"] = declared
    if name is not None:
        payload["name"] = name
    if tags:
        payload["tags"] = tags
    if stop_channels:  # left out when nothing listens yet: a control made later may
        payload["stop_channels"] = stop_channels
    payload["process"] = this_process()  # so that a reader on this host can prove it died
    return payload


def _objective(objective: Any) -> dict[str, str] | None:
    """`(name, goal)` as `run.started.objective`, or None when it is not one."""
    try:
        name, goal = objective
    except (TypeError, ValueError):
        return None
    if not isinstance(name, str) or not 0 < len(name) <= 256 or goal not in ("min", "max"):
        return None
    return {"name": name, "goal": goal}


def required_started(payload: Mapping[str, Any]) -> dict[str, Any]:
    """`run.started` with its required fields only: what cannot be wrong."""
    return {"producer": payload["producer"], "total_steps": payload["total_steps"]}


def _resumed_from(args: Arguments, resumed_from: Mapping[str, Any], output_dir: str | None) -> dict[str, Any]:
    checkpoint = resumed_from.get("checkpoint")
    run_id = resumed_from.get("run_id")
    if run_id is not None and not is_run_id(run_id):
        args.complain("run.started.resumed_from", f"resumed_from.run_id {run_id!r} is not a run id; written as null")
        run_id = None
    return {
        "run_id": run_id,
        "checkpoint": None if checkpoint is None else checkpoint_field(checkpoint, output_dir),
        "step": args.optional_int("run.started", "resumed_from.step", resumed_from.get("step")),
    }
