"""What a tracker shows of a stream's events, the same in every bridge: scalars by name,
nested settings as flat keys, `ts` as a time, run ids as names a file system and a tracker take."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, TypeGuard

from trainwire._generated.contract import SCALARS
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

#: the `train.step` fields shown as `train/<field>` (its schema's `x-trainwire-scalars`)
STEP_SCALARS = SCALARS["train.step"][1]


def scalars_of(event: Mapping[str, Any]) -> dict[str, float]:
    """The scalars of a `train.step` (`train/<field>`, `train/<metric>`), `train.epoch`
    (`epoch/<metric>`), `eval.completed` (`<split>/<metric>`) or `run.finished`
    (`final/<metric>`), as each event schema's `x-trainwire-scalars` says; nulls are left
    out, every other event has none."""
    shown = SCALARS.get(event["event"])
    if shown is None:
        return {}
    prefix, fields = shown
    values = {name: event.get(name) for name in fields}
    values.update(event.get("metrics") or {})
    # an evaluation's metrics are shown under its split
    prefix = event.get("split") or prefix
    return {f"{prefix}/{name}": float(value) for name, value in values.items() if _is_number(value)}


def trial_scalars(ended: Mapping[str, Any]) -> dict[str, float]:
    """A `trial.ended`'s result as a tracker shows a trial's outcome: `trial/<metric>`
    (nulls left out)."""
    metrics = ended.get("metrics") or {}
    return {f"trial/{name}": float(value) for name, value in metrics.items() if _is_number(value)}


def scalar_step(event: Mapping[str, Any]) -> int:
    """The step a scalar is shown at: the line's own (a run that finished before its
    first step has none: 0)."""
    step = event.get("step")
    return step if isinstance(step, int) else 0


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
