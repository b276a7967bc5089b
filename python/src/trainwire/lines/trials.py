"""A run's trials in the reader state (contract 1.1): one record per trial, the best with its params.

The fold in `lines.state_fold` calls these with the run's `trials` object and a validated event
dict; the TypeScript package's fold does the same, field for field.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "evaluation",
    "new_trials",
    "trial_ended",
    "trial_evaluated",
    "trial_progress",
    "trial_started",
    "trial_went_back",
]

Event = dict[str, Any]
Trials = dict[str, Any]


def new_trials() -> Trials:
    """The `trials` of a run no trial line reached."""
    return {"count": 0, "best": None, "total": None, "list": []}


def _new_record(number: int) -> dict[str, Any]:
    return {
        "trial": number,
        "attempt": 1,
        "baseline": False,
        "status": "running",
        "params": {},
        "step": None,
        "epoch": None,
        "loss": None,
        "elapsed_s": None,
        "eta_s": None,
        "metrics": {},
        "duration_s": None,
        "error": None,
        "accepted": None,
        "last_eval": None,
        "previous_eval": None,
    }


def _record(trials: Trials, number: int) -> dict[str, Any]:
    """The record of trial `number`, made when a line of it comes before its `trial.started`."""
    trials["count"] = max(trials["count"], number)
    records: list[dict[str, Any]] = trials["list"]
    # from the end: the trial written to is nearly always the last one
    found: dict[str, Any] | None = next((known for known in reversed(records) if known["trial"] == number), None)
    if found is not None:
        return found
    record = _new_record(number)
    records.append(record)
    return record


def trial_started(trials: Trials, event: Event) -> None:
    """A (new attempt of a) trial: its record starts afresh."""
    record = _record(trials, event["trial"])
    record.update(_new_record(event["trial"]))
    record["attempt"] = event["attempt"]
    record["baseline"] = event.get("baseline", False)
    record["params"] = dict(event["params"])


def trial_ended(trials: Trials, event: Event) -> None:
    record = _record(trials, event["trial"])
    record["status"] = event["status"]
    record["eta_s"] = None
    record["metrics"] = dict(event["metrics"])
    record["duration_s"] = event["duration_s"]
    record["error"] = None if event["error"] is None else dict(event["error"])
    record["accepted"] = event.get("accepted")
    best = event.get("best")
    if best is not None:
        known = next((r for r in trials["list"] if r["trial"] == best["trial"]), None)
        trials["best"] = {
            "trial": best["trial"],
            "metric": best["metric"],
            "value": best["value"],
            "params": None if known is None else dict(known["params"]),
        }


def trial_progress(trials: Trials, event: Event) -> None:
    """A `train.step` (step, epoch, loss, clock) or `train.epoch` (step, epoch) of a trial."""
    record = _record(trials, event["trial"])
    record["step"] = event["step"]
    record["epoch"] = event.get("epoch")
    if event["event"] == "train.step":
        record["loss"] = event.get("loss")
        record["elapsed_s"] = event.get("elapsed_s")
        record["eta_s"] = event.get("eta_s")


def trial_went_back(trials: Trials, event: Event) -> None:
    """A `train.restarted` or `train.rolled_back` of a trial: its step, no estimate until the next step."""
    record = _record(trials, event["trial"])
    record["step"] = event["step"]
    record["eta_s"] = None


def evaluation(event: Event) -> dict[str, Any]:
    """An `eval.completed` as the state keeps it (the run's `last_eval`, a trial's)."""
    return {
        "step": event["step"],
        "epoch": event.get("epoch"),
        "split": event.get("split"),
        "metrics": dict(event["metrics"]),
    }


def trial_evaluated(trials: Trials, event: Event) -> None:
    """An `eval.completed` of a trial: its last evaluation, the one before kept beside it."""
    record = _record(trials, event["trial"])
    record["previous_eval"] = record["last_eval"]
    record["last_eval"] = evaluation(event)
