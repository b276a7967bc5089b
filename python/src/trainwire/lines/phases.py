"""The open phase, its per-item progress and a repeated phase's cycle in the run state (reader rules, section 3)."""

from __future__ import annotations

from typing import Any, Protocol

__all__ = ["phase_ended", "phase_progress", "phase_started"]

Event = dict[str, Any]


class RunState(Protocol):
    """The fields of a run state these effects set (the state module imports this one)."""

    phase: str | None
    phase_progress: dict[str, Any] | None
    cycle: dict[str, Any] | None


def phase_started(run: RunState, event: Event) -> None:
    run.phase = event["phase"]
    if "cycle" in event:
        run.cycle = {"phase": event["phase"], "cycle": event["cycle"], "total_cycles": event.get("total_cycles")}


def phase_ended(run: RunState, event: Event) -> None:
    if event["phase"] == run.phase:
        run.phase = None
    if run.phase_progress is not None and run.phase_progress["phase"] == event["phase"]:
        run.phase_progress = None


def phase_progress(run: RunState, event: Event) -> None:
    run.phase_progress = {
        "phase": event["phase"],
        "done": event["done"],
        "total": event["total"],
        "unit": event.get("unit"),
        "eta_s": event["eta_s"],
        "trial": event.get("trial"),
    }
