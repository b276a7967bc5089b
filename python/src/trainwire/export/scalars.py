"""What a tracker shows of a stream's events, the same in every bridge: scalars by name,
nested settings as flat keys, `ts` as a time, run ids as names a file system and a tracker take."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeGuard

from trainwire.contract.clock import parse_timestamp_us

__all__ = [
    "STEP_SCALARS",
    "flatten",
    "safe_name",
    "scalar_step",
    "scalars_of",
    "text_value",
    "timestamp_s",
    "trial_scalars",
]

#: the `train.step` fields shown as `train/<field>`
STEP_SCALARS = ("loss", "learning_rate", "grad_norm", "epoch", "samples_per_s", "tokens_per_s", "tokens_seen")


def scalars_of(event: Mapping[str, Any]) -> dict[str, float]:
    """The scalars of a `train.step` (`train/<field>`, `train/<metric>`), `train.epoch`
    (`epoch/<metric>`), `eval.completed` (`<split>/<metric>`) or `run.finished`
    (`final/<metric>`); nulls are left out, every other event has none."""
    named = _SCALARS.get(event["event"])
    if named is None:
        return {}
    prefix, values = named(event)
    return {f"{prefix}/{name}": float(value) for name, value in values.items() if _is_number(value)}


def trial_scalars(ended: Mapping[str, Any]) -> dict[str, float]:
    """A `trial.ended`'s result as a tracker shows a trial's outcome: `trial/<metric>`
    (nulls left out)."""
    metrics = ended.get("metrics") or {}
    return {f"trial/{name}": float(value) for name, value in metrics.items() if _is_number(value)}


def _step_scalars(event: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    values = {name: event.get(name) for name in STEP_SCALARS}
    values.update(event.get("metrics") or {})
    return "train", values


def _eval_scalars(event: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    return event.get("split") or "eval", dict(event.get("metrics") or {})


def _epoch_scalars(event: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    return "epoch", dict(event.get("metrics") or {})


def _final_scalars(event: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    return "final", dict(event.get("metrics") or {})


def scalar_step(event: Mapping[str, Any]) -> int:
    """The step a scalar is shown at: the line's own (a run that finished before its
    first step has none: 0)."""
    step = event.get("step")
    return step if isinstance(step, int) else 0


#: every event -> its scalars' prefix and values; None: no scalars (a test requires every
#: event of the contract here)
_SCALARS: dict[str, Callable[[Mapping[str, Any]], tuple[str, dict[str, Any]]] | None] = {
    "run.started": None,
    "run.heartbeat": None,
    "phase.progress": None,
    "train.rolled_back": None,
    "phase.started": None,
    "phase.ended": None,
    "train.step": _step_scalars,
    "train.epoch": _epoch_scalars,
    "train.restarted": None,
    "eval.completed": _eval_scalars,
    "checkpoint.saved": None,
    "trial.started": None,
    "trial.ended": None,
    "stop.requested": None,
    "run.finished": _final_scalars,
}


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """A nested mapping as `{"a.b.c": leaf}`; lists stay leaves."""
    if not isinstance(value, Mapping) or (prefix and not value):
        return {prefix: value} if prefix else {}
    flat: dict[str, Any] = {}
    for key, item in value.items():
        flat.update(flatten(item, f"{prefix}.{key}" if prefix else str(key)))
    return flat


def text_value(value: Any) -> str:
    """A leaf as trackers store it: strings as they are, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def timestamp_s(ts: str) -> float:
    """A line's `ts` in seconds since the epoch."""
    return parse_timestamp_us(ts) / 1_000_000


_NOT_IN_A_NAME = re.compile(r"[^A-Za-z0-9._-]")


def safe_name(run_id: str) -> str:
    """A run id as a directory or tracker run name: `:` and the like as `_`."""
    return _NOT_IN_A_NAME.sub("_", run_id)


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
