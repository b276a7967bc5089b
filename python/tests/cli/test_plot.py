"""`trainwire plot` on real demo runs: an HTML page a headless Chromium draws, a PNG that decodes, an SVG."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from support.paths import ROOT
from support.step_files import kept_records

from trainwire.cli.plot import chart_specs, load_runs
from trainwire.contract.clock import FakeClock
from trainwire.writer.run import Run

CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two runs side by side: the real demo training, and a Run API run with a restart."""
    base = tmp_path_factory.mktemp("runs")
    demo = subprocess.run(
        [sys.executable, "-m", "trainwire", "demo", "train", "--output-dir", str(base / "demo"), "--steps", "8",
         "--eval-every", "4", "--save-every", "4", "--step-delay", "0"],
        capture_output=True, text=True, timeout=240, cwd=ROOT,
    )  # fmt: skip
    assert demo.returncode == 0, demo.stderr
    clock = FakeClock("2026-11-29T10:00:00Z")
    run = Run(base / "restarted", run_id="restarted-run", clock=clock, step_interval_s=0, heartbeat_thread=False)
    run.start(total_steps=20, provenance=False)
    for index, step in enumerate([*range(1, 11), *range(6, 21)]):
        clock.advance(0.5)
        run.step(step, loss=3.0 / step, learning_rate=1e-3)
        if index == 9:  # out of memory at step 10: back to the checkpoint of step 5
            run.restarted("oom", step=5, batch_size_from=8, batch_size_to=4)
    run.eval(20, {"loss": 0.2, "accuracy": 0.9})
    run.checkpoint(20, base / "restarted" / "checkpoint-20", reason="final")
    run.finish("succeeded")
    return base


def trainwire(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trainwire", *arguments], capture_output=True, text=True, timeout=120, cwd=ROOT
    )


def test_series_hold_loss_evals_restarts_and_checkpoints(runs: Path) -> None:
    stream = runs / "demo" / "progress.jsonl"
    (demo,) = load_runs(stream)
    assert demo.status == "succeeded"
    written = [json.loads(line) for line in stream.read_text("utf-8").splitlines()]
    kept = kept_records(runs / "demo" / "runs" / demo.run_id / "steps.jsonl")
    # opened from the run's snapshot: the stream's steps and the ones its throttle kept aside
    assert demo.series.uplot("loss")[0] == sorted(
        line["step"]
        for line in [*written, *kept]
        if line.get("event", "train.step") == "train.step" and line["loss"] is not None
    )
    assert demo.series.uplot("eval/eval/loss")[0] == [4, 8]
    assert [marker["step"] for marker in demo.series.markers if marker["kind"] == "checkpoint"] == [4, 8]
    (restarted,) = load_runs(runs / "restarted" / "progress.jsonl")
    assert [(m["step"], m["label"]) for m in restarted.series.markers if m["kind"] == "restart"] == [(5, "oom")]
    # the second attempt redid steps 6-10: the curve breaks at 5 instead of going back in time
    steps, values = restarted.series.uplot("loss")
    assert steps == list(range(1, 21)) and [
        step for step, value in zip(steps, values, strict=False) if value is None
    ] == [5]
    titles = [chart["title"] for chart in chart_specs([demo, restarted])]
    assert (
        titles[:2] == ["loss", "learning rate"] and "accuracy" in titles
    )  # then one chart per eval metric, its splits together


def test_plot_html_renders_in_chromium_with_every_run_and_point(runs: Path, tmp_path: Path) -> None:
    out = tmp_path / "plot.html"
    result = trainwire("plot", str(runs / "demo"), str(runs / "restarted" / "progress.jsonl"), "--out", str(out))
    assert result.returncode == 0, result.stderr
    page = out.read_text("utf-8")
    assert "<script src" not in page and "<link" not in page  # self-contained: works offline
    series = load_runs(runs / "demo" / "progress.jsonl") + load_runs(runs / "restarted" / "progress.jsonl")
    # each chart joins its curves on one step axis (as the dashboard does)
    expected_points = [
        len({step for curve in chart["series"] for step in curve["steps"]}) for chart in chart_specs(series)
    ]
    with tempfile.TemporaryDirectory() as profile:
        dom = subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={profile}", "--dump-dom", out.as_uri()],
            capture_output=True, text=True, timeout=120,
        ).stdout  # fmt: skip
    assert [int(points) for points in re.findall(r'data-points="(\d+)"', dom)] == expected_points, dom[:2000]
    assert dom.count("<canvas") == len(chart_specs(series)) >= 3  # loss, learning rate, each eval metric
    # the page drew the charts the PNG/SVG plot draws: titles, curves, markers
    drawn = [(html.unescape(title), json.loads(html.unescape(labels)), markers.split())
             for title, labels, markers in re.findall(r'data-chart="([^"]*)" data-series="([^"]*)" data-markers="([^"]*)"', dom)]  # fmt: skip
    assert drawn == [
        (chart["title"], [curve["label"] for curve in chart["series"]], [marker["kind"] for marker in chart["markers"]])
        for chart in chart_specs(series)
    ]
    cells = re.findall(r"<td>([^<]*)</td>", dom)
    assert [series[0].run_id, "succeeded"] == cells[0:2] and cells[3:5] == ["restarted-run", "succeeded"]
    assert "restarted-run: restart (oom) at step 5" in dom


@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_plot_image_decodes(runs: Path, tmp_path: Path, suffix: str) -> None:
    out = tmp_path / f"plot{suffix}"
    result = trainwire("plot", str(runs), "--out", str(out))
    assert result.returncode == 0, result.stderr
    if suffix == ".png":
        from PIL import Image

        with Image.open(out) as image:
            image.load()
            assert image.format == "PNG" and image.size[0] >= 600 and image.size[1] >= 600
            assert len(image.getcolors(1 << 20) or []) > 10  # curves, not a blank page
    else:
        root = ElementTree.parse(out).getroot()
        assert root.tag == "{http://www.w3.org/2000/svg}svg"
        assert "restarted-run loss" in out.read_text("utf-8")
