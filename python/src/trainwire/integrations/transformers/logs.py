"""What the transformers Trainer's logs, metrics and hook arguments mean in trainwire fields."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from trainwire.integrations.core.hooks import number

if TYPE_CHECKING:
    from transformers import TrainingArguments

__all__ = [
    "NOT_METRICS",
    "NOT_STEP_METRICS",
    "STEP_FIELDS",
    "logs_at_epoch_end",
    "metrics_of",
    "scheduler_learning_rate",
]

#: log keys that have their own `train.step` field; every other number goes to `metrics`
STEP_FIELDS = {
    "loss": "loss",
    "learning_rate": "learning_rate",
    "grad_norm": "grad_norm",
    "num_input_tokens_seen": "tokens_seen",
    "train_tokens_per_second": "tokens_per_s",
    "train_samples_per_second": "samples_per_s",
}
NOT_METRICS = frozenset({"epoch", "step"})
NOT_STEP_METRICS = NOT_METRICS | frozenset(STEP_FIELDS)


def metrics_of(values: Mapping[str, Any], *, skip: frozenset[str], prefix: str = "") -> dict[str, Any]:
    """The entries of a log or metrics dict not in `skip`, keys without `prefix` (the run drops non-numbers)."""
    return {key.removeprefix(prefix): value for key, value in values.items() if key not in skip}


def scheduler_learning_rate(hook_arguments: Mapping[str, Any]) -> float | None:
    """The scheduler's current rate, as the trainer logs it (None when it cannot tell)."""
    scheduler = hook_arguments.get("lr_scheduler")
    try:
        return number(scheduler.get_last_lr()[0]) if scheduler is not None else None
    except Exception:  # a scheduler without get_last_lr, or one not stepped yet
        return None


def logs_at_epoch_end(args: TrainingArguments) -> bool:
    """With the `epoch` strategy the trainer logs a step only after `on_epoch_end`."""
    strategy = args.logging_strategy
    return str(getattr(strategy, "value", strategy)) == "epoch"
