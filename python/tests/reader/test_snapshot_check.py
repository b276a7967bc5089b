"""A journal snapshot is opened from only when every part is the shape its readers take: a
store checked down to each point, a state its schema accepts, lines the decoder accepts, and
no more bytes than its cap. Anything else and the stream is read instead."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from trainwire import Run
from trainwire.contract.layout import SERIES_FILE, STREAM_FILE, journal_dirs
from trainwire.reader.run_opening import read_snapshot
from trainwire.reader.snapshot_check import MAX_SNAPSHOT_BYTES


def _run(directory: Path) -> Path:
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
    run.stop_requested("enough")
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


@pytest.mark.parametrize("change", list(HOSTILE), ids=list(HOSTILE))
def test_a_snapshot_of_the_wrong_shape_is_not_opened_from(tmp_path: Path, change: str) -> None:
    journal = _run(tmp_path)
    snapshot = json.loads((journal / SERIES_FILE).read_text())
    assert read_snapshot(tmp_path / STREAM_FILE, journal) == snapshot  # as the writer wrote it: opened from
    kinds = {marker["kind"] for marker in snapshot["store"]["runs"][0]["markers"]}
    assert kinds >= {"restart", "eval", "checkpoint", "finished"}  # markers of several kinds are checked
    HOSTILE[change](snapshot)
    (journal / SERIES_FILE).write_text(json.dumps(snapshot))
    assert read_snapshot(tmp_path / STREAM_FILE, journal) is None


def test_a_snapshot_over_its_cap_or_nested_past_the_parser_is_not_opened_from(tmp_path: Path) -> None:
    journal = _run(tmp_path)
    path = journal / SERIES_FILE
    written = path.read_bytes()
    path.write_bytes(written + b" " * (MAX_SNAPSHOT_BYTES - len(written)))  # at the cap: JSON with a trailing space
    assert read_snapshot(tmp_path / STREAM_FILE, journal) is not None
    os.truncate(path, MAX_SNAPSHOT_BYTES + 1)
    assert read_snapshot(tmp_path / STREAM_FILE, journal) is None
    path.write_text("[" * 100_000 + "]" * 100_000)
    assert read_snapshot(tmp_path / STREAM_FILE, journal) is None
