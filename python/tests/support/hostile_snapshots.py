"""A run whose journal snapshot holds every kind of series and marker, and the ways a hostile
snapshot can be wrong: shared by the server's snapshot check and the page's opening check."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from trainwire import Run
from trainwire.contract.layout import journal_dirs

__all__ = ["HOSTILE", "SPELLED_OTHERWISE", "run_with_every_marker"]


def run_with_every_marker(directory: Path) -> Path:
    """A run with every kind of series and marker; its journal directory."""
    run = Run(directory, step_interval_s=0, heartbeat_interval_s=None)
    run.start(total_steps=6, config={"lr": 0.1}, total_trials=1, provenance=False)
    run.trial_started(1, {"lr": 0.1})
    for step in range(1, 4):
        run.step(step, loss=1.0 / step, metrics={"acc": 0.5}, trial=1)
    run.restarted("oom", step=2)
    run.step(3, loss=0.3)
    run.eval(3, {"loss": 0.4})
    run.checkpoint(3, directory / "ckpt")
    run.trial_ended(1, "succeeded", metrics={"loss": 0.3}, best={"trial": 1, "metric": "loss", "value": 0.3})
    run.stop_requested("api", reason="enough")
    run.finish("interrupted")
    return journal_dirs(directory)[0]


def _loss(snapshot: dict[str, Any]) -> dict[str, Any]:
    series: dict[str, Any] = snapshot["store"]["runs"][0]["series"]["loss"]
    return series


HOSTILE: dict[str, Callable[[dict[str, Any]], object]] = {
    "a point not a number": lambda snapshot: _loss(snapshot)["buckets"][0][2].__setitem__(2, "0.5"),
    "a point not finite": lambda snapshot: _loss(snapshot)["buckets"][0][2].__setitem__(2, 10**400),
    "a bucket too short": lambda snapshot: _loss(snapshot)["buckets"][0].pop(),
    "a bucket size of 0": lambda snapshot: _loss(snapshot).update(bucket_size=0),
    "a count of true": lambda snapshot: _loss(snapshot).update(count=True),
    "series as a list": lambda snapshot: snapshot["store"]["runs"][0].update(series=[]),
    "an unknown marker": lambda snapshot: snapshot["store"]["runs"][0]["markers"][0].update(kind="boom"),
    "restarts not pairs": lambda snapshot: snapshot["store"]["runs"][0].update(restarts=[[2]]),
    "runs not a list": lambda snapshot: snapshot["store"].update(runs={"a": 1}),
    "a state status of 123": lambda snapshot: snapshot["state"].update(status=123),
    "a state step as text": lambda snapshot: snapshot["state"].update(step="3"),
    "an event missing fields": lambda snapshot: snapshot["events"].append(
        {"event": "run.finished", "run_id": snapshot["run_id"]}
    ),
    "an event of another run": lambda snapshot: snapshot["events"][-1].update(run_id="other"),
    "an event no view keeps": lambda snapshot: snapshot["events"].append({**snapshot["events"][0], "event": "x"}),
}


def _integers_as_floats(snapshot: dict[str, Any]) -> None:
    """Every count of the store spelled as JSON may spell an integer: `2.0` (what a JavaScript
    reader cannot tell from `2`, and the schema takes as 2)."""
    store = snapshot["store"]
    store["max_points"] = float(store["max_points"])
    run = store["runs"][0]
    run["attempt"] = float(run["attempt"])
    run["dropped_markers"] = float(run["dropped_markers"])
    run["markers"][0]["attempt"] = float(run["markers"][0]["attempt"])
    _loss(snapshot).update(bucket_size=float(_loss(snapshot)["bucket_size"]), count=float(_loss(snapshot)["count"]))
    bucket = _loss(snapshot)["buckets"][0]
    bucket[0], bucket[1] = float(bucket[0]), float(bucket[1])


#: snapshots as valid as the one written, spelled otherwise: both checkers must open from them
SPELLED_OTHERWISE: dict[str, Callable[[dict[str, Any]], object]] = {
    "counts spelled as floats": _integers_as_floats,
    "an extra field kept": lambda snapshot: snapshot["store"]["runs"][0].update(x_note="kept"),
}
