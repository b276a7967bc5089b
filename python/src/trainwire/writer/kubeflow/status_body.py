"""A run's progress as the body a TrainJob's status server takes: `{"trainerStatus": {...}}`,
valid against the TrainJob CRD's `trainerStatus` (Kubeflow Trainer v2.2+).

The CRD's limits, and the rule that keeps every body within them (docs/integrations.md):
- `progressPercentage` is an integer 0-100: the fraction done, rounded down, at most 99 while
  the run goes on; 100 only for a run that `succeeded`; a failed or stopped run keeps its last.
- `estimatedRemainingSeconds` is an integer 0 to 2^31-1 (rounded up; 0 once the run ended).
- `metrics` holds at most 256 `{name, value}`, both strings of 1-64 characters. A longer name
  keeps its first 55 characters, then `~` and 8 hex digits of its SHA-256 (64 in all, so two
  long names stay apart); a longer value keeps its first 61 characters and `...`. An empty
  name or value is left out, and so is a second metric of the same name. Numbers are written
  with 10 significant digits. The run's own metrics come first (status, step, total_steps,
  epoch, total_epochs, loss, learning_rate, trial counts, the best), then the last
  evaluation's in its order; past 256, the last are left out.
- The body is at most 64 KiB (the server's limit): past it, metrics are left out from the end.
- `lastUpdatedTime` (required by the CRD's CEL rule) is the time of the post, RFC 3339 UTC.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

from trainwire.writer.kubeflow.progress import RunProgress

__all__ = [
    "MAX_BODY_BYTES",
    "MAX_METRICS",
    "MAX_NAME_CHARS",
    "MAX_SECONDS",
    "MAX_VALUE_CHARS",
    "cut_name",
    "cut_value",
    "status_body",
    "trainer_status",
]

#: the CRD's `metrics` maxItems, and each name's and value's maxLength
MAX_METRICS = 256
MAX_NAME_CHARS = 64
MAX_VALUE_CHARS = 64
#: `estimatedRemainingSeconds` is an int32
MAX_SECONDS = 2**31 - 1
#: the status server reads at most this many bytes of a body
MAX_BODY_BYTES = 1 << 16
_HASH_DIGITS = 8


def cut_name(name: str) -> str:
    """`name` within 64 characters: a longer one keeps 55, then `~` and 8 hex digits of its hash."""
    if len(name) <= MAX_NAME_CHARS:
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_DIGITS]
    return f"{name[: MAX_NAME_CHARS - _HASH_DIGITS - 1]}~{digest}"


def cut_value(value: str) -> str:
    """`value` within 64 characters: a longer one keeps 61 and ends with `...`."""
    return value if len(value) <= MAX_VALUE_CHARS else value[: MAX_VALUE_CHARS - 3] + "..."


def trainer_status(progress: RunProgress, now: datetime) -> dict[str, Any]:
    """The `trainerStatus` object for `progress` at `now`."""
    status: dict[str, Any] = {}
    percent = _percent(progress)
    if percent is not None:
        status["progressPercentage"] = percent
    if progress.finished:
        status["estimatedRemainingSeconds"] = 0
    elif isinstance(progress.eta_s, (int, float)) and math.isfinite(progress.eta_s):
        status["estimatedRemainingSeconds"] = min(max(math.ceil(progress.eta_s), 0), MAX_SECONDS)
    status["metrics"] = _metrics(progress)
    status["lastUpdatedTime"] = now.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return status


def status_body(progress: RunProgress, now: datetime) -> bytes:
    """The POST body, UTF-8 JSON, at most `MAX_BODY_BYTES`."""
    status = trainer_status(progress, now)
    body = _encode(status)
    while len(body) > MAX_BODY_BYTES and status["metrics"]:
        # about the share of metrics that is too much, at least one: few passes
        over = len(body) - MAX_BODY_BYTES
        each = max(1, (len(body) // max(len(status["metrics"]), 1)))
        del status["metrics"][-max(1, over // each + 1) :]
        body = _encode(status)
    return body


def _encode(status: dict[str, Any]) -> bytes:
    return json.dumps({"trainerStatus": status}, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "replace")


def _percent(progress: RunProgress) -> int | None:
    if progress.status == "succeeded":
        return 100
    if progress.fraction is None or not math.isfinite(progress.fraction):
        return None
    return min(max(int(progress.fraction * 100), 0), 99)


def _metrics(progress: RunProgress) -> list[dict[str, str]]:
    kept: list[dict[str, str]] = []
    seen: set[str] = set()
    for name, value in _named_values(progress):
        text = _text(value)
        name = cut_name(str(name))
        if not name or not text or name in seen:
            continue
        seen.add(name)
        kept.append({"name": name, "value": cut_value(text)})
        if len(kept) == MAX_METRICS:
            break
    return kept


def _named_values(progress: RunProgress) -> Iterator[tuple[str, Any]]:
    yield "status", progress.status
    yield "step", progress.step
    yield "total_steps", progress.total_steps
    yield "epoch", progress.epoch
    yield "total_epochs", progress.total_epochs
    yield "loss", progress.loss
    yield "learning_rate", progress.learning_rate
    yield "trials_done", progress.trials_done
    yield "trials_total", progress.trials_total
    if progress.best_metric is not None:
        yield "best_trial", progress.best_trial
        yield f"best_{progress.best_metric}", progress.best_value
    yield from progress.eval_metrics.items()


def _text(value: Any) -> str | None:
    """A metric's value as the CRD's string; None when there is none to show."""
    if value is None or isinstance(value, (dict, list)):
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return format(value, ".10g") if math.isfinite(value) else str(value)
    return str(value)
