"""The run page's trials in Chromium: the table with params, objective and duration, the best
marked, sorted by a header click (a second click reverses), and the objective-per-trial chart
with the best-so-far line."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from support.paths import SCRIPTS
from support.serve_process import serve

from trainwire import Run

# trial -> (learning rate, loss); trial 2 is the best, trial 3 does not beat it
SWEEP = {1: (0.1, 0.5), 2: (0.01, 0.3), 3: (0.001, 0.4)}


def _sweep(directory: Path) -> None:
    run = Run(directory, step_interval_s=0, heartbeat_interval_s=None)
    run.start(total_trials=len(SWEEP), seed=None)
    best: dict[str, object] | None = None
    for trial, (learning_rate, loss) in SWEEP.items():
        run.trial_started(trial, {"lr": learning_rate, "optimizer": "adam"})
        if best is None or loss < float(str(best["value"])):
            best = {"trial": trial, "metric": "loss", "value": loss}
        run.trial_ended(trial, "succeeded", metrics={"loss": loss}, best=best)
    run.finish("succeeded")


def test_trials_table_sorts_and_charts_the_objective(tmp_path: Path) -> None:
    _sweep(tmp_path / "sweep")
    with serve(str(tmp_path)) as server:
        browser = subprocess.run(
            ["node", str(SCRIPTS / "dashboard_trials.mjs"), f"{server.base}/?token={server.token}"],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert browser.returncode == 0, browser.stdout + browser.stderr
    reports = {report["check"]: report for report in map(json.loads, browser.stdout.splitlines())}
    table = reports["table"]
    assert table["headers"] == ["trial", "status", "params", "objective", "duration", "metrics"]
    rows = table["rows"]
    assert [row["cells"][0] for row in rows] == ["1", "2", "3"]
    assert [row["best"] for row in rows] == [False, True, False]
    assert rows[0]["cells"][1:4] == ["succeeded", "lr=0.1, optimizer=adam", "0.5"]
    assert rows[2]["cells"][2:4] == ["lr=0.001, optimizer=adam", "0.4"]
    assert all(re.fullmatch(r"\d+\.\ds", row["cells"][4]) for row in rows)
    assert rows[1]["cells"][5] == "loss 0.3"
    sorted_ = reports["sorted"]
    assert [row["cells"][0] for row in sorted_["ascending"]] == ["2", "3", "1"]
    assert [row["cells"][0] for row in sorted_["descending"]] == ["1", "3", "2"]
    assert sorted_["ascending"][0]["best"]
    chart = reports["chart"]
    assert chart["hidden"] is False and chart["canvas"]
    assert chart["series"] == ["loss", "best so far"]
    assert chart["points"] == [[1, 0.5, 0.5], [2, 0.3, 0.3], [3, 0.4, 0.3]]
