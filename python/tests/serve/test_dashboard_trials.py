"""The run page's trials in Chromium: the table with params, objective and duration, the best
marked, sorted by a header click (a second click reverses), the trials' loss curves overlaid (a
bounded number of a big sweep, said under the chart), the objective-per-trial chart with the
best-so-far line, and the stop button ending a live Optuna study after its running trial."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from support.paths import BROWSER_SCRIPTS, ROOT, SCRIPTS
from support.serve_process import serve
from support.stream_files import stream_of

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
            run.step(step, loss=final + (3 - step) / 10, epoch=step / 2, trial=trial)
            if step > 1:  # an evaluation after steps 2 and 3: is the trial's validation improving?
                run.eval(step, {"loss": final + (3 - step) / 5}, split="validation", trial=trial)
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
            ["node", str(BROWSER_SCRIPTS / "dashboard-trials.js"), f"{server.base}/?token={server.token}", status, str(trials)],
            capture_output=True, text=True, timeout=90,
        )  # fmt: skip
    assert browser.returncode == 0, browser.stdout + browser.stderr
    return {report["check"]: report for report in map(json.loads, browser.stdout.splitlines())}


def test_trials_table_sorts_and_charts_the_objective(tmp_path: Path) -> None:
    _sweep(tmp_path / "sweep", {trial: loss for trial, (_lr, loss) in SWEEP.items()})
    reports = _page(tmp_path, "succeeded", len(SWEEP))
    table = reports["table"]
    assert table["headers"] == ["trial", "status", "params", "objective", "epoch", "last eval", "duration", "metrics"]
    rows = table["rows"]
    assert [row["cells"][0] for row in rows] == ["1", "2", "3"]
    assert [row["best"] for row in rows] == [False, True, False]
    assert rows[0]["cells"][1:4] == ["succeeded", "lr=0.1, optimizer=adam", "0.5"]
    assert rows[2]["cells"][2:4] == ["lr=0.001, optimizer=adam", "0.4"]
    # which epoch each trial is on, and its last evaluation beside the one before
    assert [row["cells"][4] for row in rows] == ["1.5", "1.5", "1.5"]
    assert rows[1]["cells"][5] == "validation @3: loss 0.3 (was 0.5)"
    assert all(re.fullmatch(r"\d+\.\ds", row["cells"][6]) for row in rows)
    assert rows[1]["cells"][7] == "loss 0.3"
    sorted_ = reports["sorted"]
    assert [row["cells"][0] for row in sorted_["ascending"]] == ["2", "3", "1"]
    assert [row["cells"][0] for row in sorted_["descending"]] == ["1", "3", "2"]
    assert sorted_["ascending"][0]["best"]
    chart = reports["chart"]
    assert chart["hidden"] is False and chart["canvas"]
    assert chart["series"] == ["loss", "best so far"]
    assert chart["points"] == [[1, 0.5, 0.5], [2, 0.3, 0.3], [3, 0.4, 0.3]]
    assert chart["axis"] == "trial"  # its x axis counts (and its label says) trials, not steps
    # every trial's loss, overlaid and labelled by its number, in place of the run's own charts
    curves = reports["curves"]
    assert curves["hidden"] is False and curves["canvas"]
    assert (curves["title"], curves["trials"], curves["note"]) == ("loss per trial", [1, 2, 3], None)
    assert curves["series"] == ["trial 1", "trial 2", "trial 3"]
    assert curves["runCharts"] == []


def test_a_big_sweep_draws_the_best_trials_and_the_running_ones(tmp_path: Path) -> None:
    # ten ended trials, the lower the number the lower the loss but trial 1 the worst; 11 and 12 run
    losses = {trial: trial / 10 for trial in range(2, 11)} | {1: 5.0}
    _sweep(tmp_path / "sweep", losses, running=(11, 12))
    curves = _page(tmp_path, "running", 12)["curves"]
    assert curves["trials"] == [2, 3, 4, 5, 6, 7, 11, 12]
    assert curves["series"] == [f"trial {trial}" for trial in curves["trials"]]
    assert curves["note"] == "8 of 12 trials drawn: the best 6 by loss and the 2 running"


def test_the_stop_button_ends_a_study_after_its_running_trial(tmp_path: Path) -> None:
    study_dir = tmp_path / "runs" / "study"
    study_dir.parent.mkdir()
    asked, steps = 100, 10
    study = subprocess.Popen(
        [sys.executable, str(SCRIPTS / "optuna_study.py"), str(study_dir), str(asked), str(steps)],
        env={**os.environ, "PYTHONPATH": str(ROOT / "python" / "src")}, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        with serve(str(tmp_path / "runs")) as server:
            browser = subprocess.run(
                ["node", str(BROWSER_SCRIPTS / "dashboard-stop-study.js"), f"{server.base}/?token={server.token}"],
                capture_output=True, text=True, timeout=180,
            )  # fmt: skip
        assert browser.returncode == 0, browser.stdout + browser.stderr
        assert study.wait(timeout=120) == 2, study.stderr.read() if study.stderr else ""
    finally:
        if study.poll() is None:
            study.kill()
    reports = {report["check"]: report for report in map(json.loads, browser.stdout.splitlines())}
    assert "succeeded" in reports["running"]["trials"] and reports["interrupted"]["stopHidden"]
    assert reports["interrupted"]["asked"] == [
        "Stop this search? It ends after its running trials, interrupted.\nReason:"
    ]
    events = stream_of(study_dir / "progress.jsonl")
    finished = events[-1]
    assert (finished["event"], finished["status"], finished["exit_code"]) == ("run.finished", "interrupted", 2)
    stop = next(index for index, event in enumerate(events) if event["event"] == "stop.requested")
    assert (events[stop]["requested_by"], events[stop]["reason"]) == ("dashboard", "enough trials")
    started = [event["trial"] for event in events if event["event"] == "trial.started"]
    ended = {event["trial"]: event for event in events if event["event"] == "trial.ended"}
    # the study ran fewer trials than asked; the one running at the stop ran to its end, and no
    # trial began once the stop was seen but the one its objective had already entered
    assert 1 <= len(started) < asked and sorted(ended) == sorted(started)
    assert all(trial["status"] == "succeeded" for trial in ended.values())
    assert len([event for event in events[stop:] if event["event"] == "trial.started"]) <= 1
    last_steps = {event["trial"]: event["step"] for event in events if event["event"] == "train.step"}
    assert last_steps == {trial: steps for trial in started}
    assert reports["interrupted"]["trials"] == ["succeeded"] * len(started)
