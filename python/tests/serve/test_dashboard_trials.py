"""The run page's trials in Chromium: the table with params, objective and duration, the best
marked, sorted by a header click (a second click reverses), the trials' loss curves overlaid (a
bounded number of a big sweep, said under the chart) and the objective-per-trial chart with the
best-so-far line."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

from support.paths import SCRIPTS
from support.serve_process import serve

from trainwire import Run

# trial -> (learning rate, loss); trial 2 is the best, trial 3 does not beat it
SWEEP = {1: (0.1, 0.5), 2: (0.01, 0.3), 3: (0.001, 0.4)}


def _sweep(directory: Path, losses: dict[int, float], running: tuple[int, ...] = ()) -> None:
    """Trials that each train three steps down to their loss, then end (the `running` ones do not),
    the best so far named at each end; a sweep with running trials is left running."""
    run = Run(directory, step_interval_s=0, heartbeat_interval_s=None)
    run.start(total_trials=len(losses) + len(running), seed=None)
    best: dict[str, object] | None = None
    for trial in [*losses, *running]:
        run.trial_started(trial, {"lr": 10.0**-trial, "optimizer": "adam"})
        final = losses.get(trial, 1.0)
        for step in (1, 2, 3):
            run.step(step, loss=final + (3 - step) / 10, trial=trial)
        if trial in running:
            continue
        if best is None or final < float(str(best["value"])):
            best = {"trial": trial, "metric": "loss", "value": final}
        run.trial_ended(trial, "succeeded", metrics={"loss": final}, best=best)
    if not running:
        run.finish("succeeded")


def _page(directory: Path, status: str, trials: int) -> dict[str, Any]:
    with serve(str(directory)) as server:
        browser = subprocess.run(
            ["node", str(SCRIPTS / "dashboard_trials.mjs"), f"{server.base}/?token={server.token}", status, str(trials)],
            capture_output=True, text=True, timeout=90,
        )  # fmt: skip
    assert browser.returncode == 0, browser.stdout + browser.stderr
    return {report["check"]: report for report in map(json.loads, browser.stdout.splitlines())}


def test_trials_table_sorts_and_charts_the_objective(tmp_path: Path) -> None:
    _sweep(tmp_path / "sweep", {trial: loss for trial, (_lr, loss) in SWEEP.items()})
    reports = _page(tmp_path, "succeeded", len(SWEEP))
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
    # every trial's loss, overlaid and labelled by its number; not among the run's own charts
    curves = reports["curves"]
    assert curves["hidden"] is False and curves["canvas"]
    assert (curves["title"], curves["trials"], curves["note"]) == ("loss per trial", [1, 2, 3], None)
    assert curves["series"] == ["trial 1", "trial 2", "trial 3"]
    assert "loss" in curves["runCharts"] and "loss per trial" not in curves["runCharts"]


def test_a_big_sweep_draws_the_best_trials_and_the_running_ones(tmp_path: Path) -> None:
    # ten ended trials, the lower the number the lower the loss but trial 1 the worst; 11 and 12 run
    losses = {trial: trial / 10 for trial in range(2, 11)} | {1: 5.0}
    _sweep(tmp_path / "sweep", losses, running=(11, 12))
    curves = _page(tmp_path, "running", 12)["curves"]
    assert curves["trials"] == [2, 3, 4, 5, 6, 7, 11, 12]
    assert curves["series"] == [f"trial {trial}" for trial in curves["trials"]]
    assert curves["note"] == "8 of 12 trials drawn: the best 6 by loss and the 2 running"
