"""Opening a run at once, in Chromium: a run with a journal opens from the server's opening (its
stream then fetched only past it, a Range starting after byte 0) and shows the same charts and
panels as the same stream without a journal, which the page reads from byte 0."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from support.paths import BROWSER_SCRIPTS
from support.serve_process import serve

from trainwire import Run
from trainwire.contract.layout import STREAM_FILE

STEPS = 40
CHARTS = ["loss", "learning rate", "accuracy", "reward"]  # the script waits for these and the last step


def _resumed_with_phases(directory: Path) -> None:
    """Two processes of one run, each in a phase with an evaluation; the second resumes the first."""
    first = Run(directory, step_interval_s=0, heartbeat_interval_s=None)
    first.start(total_steps=STEPS, config={"lr": 0.1}, provenance=False)
    with first.phase("train"):
        for step in range(1, STEPS // 2 + 1):
            first.step(step, loss=2.0 / step, learning_rate=0.1, metrics={"reward": float(step)})
        first.eval(STEPS // 2, {"loss": 0.5, "accuracy": 0.25}, split="validation")
    first.checkpoint(STEPS // 2, directory / "checkpoint-20")
    first.finish("interrupted")
    second = Run(directory, step_interval_s=0, heartbeat_interval_s=None)
    second.start(
        total_steps=STEPS,
        config={"lr": 0.1},
        provenance=False,
        resumed_from={"run_id": first.run_id, "checkpoint": "checkpoint-20", "step": STEPS // 2},
    )
    with second.phase("train"):
        for step in range(STEPS // 2 + 1, STEPS + 1):
            second.step(step, loss=2.0 / step, learning_rate=0.1, metrics={"reward": float(step)})
        second.eval(STEPS, {"loss": 0.25, "accuracy": 0.5}, split="validation")
    second.finish()


def _range_start(header: str) -> int:
    assert header.startswith("bytes="), header
    return int(header.removeprefix("bytes=").split("-")[0])


def test_a_run_with_a_journal_opens_past_byte_0_with_the_same_charts(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    _resumed_with_phases(runs / "opened")
    (runs / "from-zero").mkdir()
    shutil.copyfile(runs / "opened" / STREAM_FILE, runs / "from-zero" / STREAM_FILE)  # the same bytes, no journal
    size = (runs / "opened" / STREAM_FILE).stat().st_size
    with serve(str(runs)) as server:
        browser = subprocess.run(
            ["node", str(BROWSER_SCRIPTS / "dashboard-opening.js"), f"{server.base}/?token={server.token}", str(STEPS), *CHARTS],
            capture_output=True, text=True, timeout=240,
        )  # fmt: skip
    assert browser.returncode == 0, browser.stdout + browser.stderr
    reports = {report["check"]: report for report in map(json.loads, browser.stdout.splitlines())}
    opened, from_zero = reports["opened"], reports["from-zero"]
    assert [_range_start(header) for header in from_zero["ranges"]][:1] == [0]
    # opened from the journal: the first request for the stream starts past its first byte
    assert opened["ranges"] and _range_start(opened["ranges"][0]) > 0, opened["ranges"]
    assert opened["view"] == from_zero["view"]
    charts = {chart["title"]: chart for chart in opened["view"]["charts"]}
    assert charts["loss"]["points"] >= STEPS and "restart" in charts["loss"]["markers"].split()
    assert opened["view"]["bytes"] == size
    assert "train" in opened["view"]["phases"]
