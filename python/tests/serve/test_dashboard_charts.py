"""The run page in Chromium: every metric charted and grouped by kind, the CSV of a chart, the
marker legend with the end coloured by status, the wall-clock axis, and stream text that
cannot break the page (escaped controls, no "null", long values cut with the whole on hover)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from support.paths import BROWSER_SCRIPTS
from support.serve_process import serve

from trainwire import Run

BIDI_NAME = "evil\u202etxt.exe"
LONG = "x" * 400


def _failed_run(directory: Path) -> None:
    run = Run(directory, step_interval_s=0, heartbeat_interval_s=None)
    run.start(total_steps=400_000, config={"name": BIDI_NAME, "long": LONG}, seed=None)
    for index in range(1, 41):
        step = 100_000 + index * 5_000
        run.step(
            step, loss=2.0 / index, learning_rate=1e-3, grad_norm=0.5 + index / 100, samples_per_s=69_500.0 + index,
            metrics={"reward": float(index), "gpu_memory_gb": 10.0},
        )  # fmt: skip
        if index % 10 == 0:
            run.eval(step, {"loss": 1.0 / index, "accuracy": index / 40, "runtime": 3.0}, split="validation")
    run.finish("failed", error=ValueError(BIDI_NAME))


def test_every_metric_grouped_with_csv_legend_wall_clock_and_safe_text(tmp_path: Path) -> None:
    _failed_run(tmp_path / "run")
    screenshots = tmp_path / "screenshots"
    screenshots.mkdir()
    with serve(str(tmp_path)) as server:
        browser = subprocess.run(
            ["node", str(BROWSER_SCRIPTS / "dashboard-charts.js"), f"{server.base}/?token={server.token}",
             str(screenshots)],
            capture_output=True, text=True, timeout=240,
        )  # fmt: skip
    assert browser.returncode == 0, browser.stdout + browser.stderr
    reports = {report["check"]: report for report in map(json.loads, browser.stdout.splitlines())}
    groups = {group["kind"]: group for group in reports["groups"]["groups"]}
    assert groups["training"]["charts"] == ["loss", "learning rate", "grad norm"] and groups["training"]["open"]
    assert groups["evaluation"]["charts"] == ["accuracy"]
    assert groups["speed"]["charts"] == ["throughput", "timings"] and not groups["speed"]["open"]
    assert groups["memory"]["charts"] == ["memory"] and groups["custom"]["charts"] == ["reward"]
    legend = dict(reports["legend"]["legend"])
    assert legend["finished failed"] == "#d92d20"  # a failed run does not end with a green line
    assert "eval" in legend
    csv = reports["csv"]["text"].splitlines()
    assert reports["csv"]["name"] == "grad_norm.csv" and csv[0] == "series,step,time,value"
    assert len(csv) == 41 and csv[1].startswith('"grad_norm",105000,20') and csv[1].endswith(",0.51")
    assert reports["wall clock"]["points"] > 0
    text = reports["text"]
    assert "\u202e" not in text["config"] + text["progress"] and "evil\\u202etxt.exe" in text["config"]
    assert "null" not in text["provenance"]
    assert text["overflow"] <= 0, "a long value widened the page"
