"""What the Kubeflow reporter tells a TrainJob, taken from one place: the run's state as the
fold keeps it (`lines.state_fold.RunState.to_dict()`), plus the epochs planned, which
`run.started` says and the state does not keep. `progress_of` is the one function that reads
the state: the reporter (`reporter.py`) and `trainwire export kubeflow` both call it, and a
richer account of a run can replace its input without touching the mapping (`status_body.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["RunProgress", "progress_of"]


@dataclass(frozen=True)
class RunProgress:
    """A run as a TrainJob's `trainerStatus` shows it; None where the run did not say."""

    status: str
    step: int | None = None
    total_steps: int | None = None
    #: the fraction done, 0 to 1 (of the steps, or of the trials for a search)
    fraction: float | None = None
    eta_s: float | None = None
    loss: float | None = None
    learning_rate: float | None = None
    epoch: float | None = None
    total_epochs: float | None = None
    #: the last evaluation's metrics, keyed `<split>_<name>` (the name alone when it already starts so)
    eval_metrics: dict[str, Any] = field(default_factory=dict)
    trials_done: int | None = None
    trials_total: int | None = None
    best_metric: str | None = None
    best_value: float | None = None
    best_trial: int | None = None

    @property
    def finished(self) -> bool:
        return self.status not in ("running", "stale")


def progress_of(state: Mapping[str, Any], *, total_epochs: float | None = None) -> RunProgress:
    """The progress of one run from its reader state (`RunState.to_dict()`)."""
    trials = state.get("trials") or {}
    records = trials.get("list") or []
    total_trials = trials.get("total")
    searching = bool(total_trials) or bool(records)
    done = sum(1 for record in records if record.get("status") != "running")
    best = trials.get("best") or {}
    return RunProgress(
        status=str(state.get("status", "running")),
        step=state.get("step"),
        total_steps=state.get("total_steps"),
        fraction=_search_fraction(state, records, total_trials) if searching else _step_fraction(state),
        eta_s=_search_eta(records, total_trials) if searching else state.get("eta_s"),
        loss=state.get("loss"),
        learning_rate=state.get("learning_rate"),
        epoch=state.get("epoch"),
        total_epochs=total_epochs,
        eval_metrics=_eval_metrics(state.get("last_eval")),
        trials_done=done if searching else None,
        trials_total=total_trials,
        best_metric=best.get("metric"),
        best_value=best.get("value"),
        best_trial=best.get("trial"),
    )


def _step_fraction(state: Mapping[str, Any]) -> float | None:
    progress = state.get("progress")
    if isinstance(progress, (int, float)):
        return float(progress)
    step, total = state.get("step"), state.get("total_steps")
    if isinstance(step, int) and isinstance(total, int) and total > 0:
        return min(step / total, 1.0)
    return None


def _search_fraction(state: Mapping[str, Any], records: list[dict[str, Any]], total: int | None) -> float | None:
    """Trials ended, plus the fraction the last step said of a trial still running, of the
    trials planned."""
    if not total:
        return None
    ended = sum(1 for record in records if record.get("status") != "running")
    running = any(record.get("status") == "running" for record in records)
    progress = state.get("progress")
    within = float(progress) if running and isinstance(progress, (int, float)) else 0.0
    return min((ended + within) / total, 1.0)


def _search_eta(records: list[dict[str, Any]], total: int | None) -> float | None:
    """The trials left at the mean duration of those ended, less what the running ones took."""
    durations = [
        float(r["duration_s"]) for r in records if r.get("status") != "running" and r.get("duration_s") is not None
    ]
    if not total or not durations:
        return None
    ended = sum(1 for record in records if record.get("status") != "running")
    spent = sum(float(r.get("elapsed_s") or 0.0) for r in records if r.get("status") == "running")
    return max(sum(durations) / len(durations) * max(total - ended, 0) - spent, 0.0)


def _eval_metrics(last_eval: Mapping[str, Any] | None) -> dict[str, Any]:
    if not last_eval:
        return {}
    split = str(last_eval.get("split") or "eval")
    metrics: Mapping[str, Any] = last_eval.get("metrics") or {}
    return {(name if name.startswith(f"{split}_") else f"{split}_{name}"): value for name, value in metrics.items()}
