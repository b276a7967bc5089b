"""The `trainwire serve` page in headless Chromium, against a real server: the runs list
(folders, notes, config columns, a filter over what is shown), a resumed run as one curve,
errors of runs and trials, a stale run, a missing run, live compare, the single-run directory.
The browser's part is `typescript/test/browser/dashboard-page.ts`, compiled by `npm run build`;
its screenshots go to `TRAINWIRE_SCREENSHOTS`."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from support.export_streams import readme_run
from support.paths import BROWSER_SCRIPTS
from support.serve_process import serve

from trainwire import Run

SCRIPT = BROWSER_SCRIPTS / "dashboard-page.js"


def _resumed(directory: Path) -> tuple[str, str]:
    first = Run(directory, step_interval_s=0, heartbeat_interval_s=None)
    first.start(total_steps=20, config={"lr": 0.1, "model": {"width": 64}}, provenance=False)
    for step in range(1, 11):
        first.step(step, loss=2.0 / step, learning_rate=0.1)
    first.checkpoint(10, directory / "checkpoint-10")
    first.finish("interrupted")
    second = Run(directory, step_interval_s=0, heartbeat_interval_s=None)
    second.start(
        total_steps=20,
        config={"lr": 0.1, "model": {"width": 64}},
        provenance=False,
        resumed_from={"run_id": first.run_id, "checkpoint": "checkpoint-10", "step": 10},
    )
    for step in range(11, 21):
        second.step(step, loss=2.0 / step, learning_rate=0.1)
    second.finish()
    (directory / "notes.md").write_text("resumed after preemption\n")
    return first.run_id, second.run_id


def _failed(directory: Path) -> None:
    run = Run(directory, step_interval_s=0, heartbeat_interval_s=None, name="beta sweep", tags=["baseline", "fp16"])
    run.start(total_steps=10, config={"lr": 0.3, "model": {"width": 64}}, provenance=False)
    run.trial_started(1, params={"lr": 0.3})
    run.trial_ended(1, "failed", error=ValueError("trial diverged at step 3"))
    for step in range(1, 4):
        run.step(step, loss=float(step))
    run.finish("failed", error=RuntimeError("CUDA out of memory"))


def _stale(directory: Path) -> None:
    run = Run(directory, step_interval_s=0, heartbeat_interval_s=0.5)
    run.start(total_steps=100, config={"lr": 0.01}, provenance=False)
    run.phase_started("train")
    run.step(1, loss=1.0)
    run.close()  # the process is gone: no heartbeat, no end


@contextmanager
def _live(directory: Path) -> Iterator[None]:
    """A run that takes a step every 0.2 s while the block runs (60 s at most)."""
    run = Run(directory, step_interval_s=0, heartbeat_interval_s=None)
    run.start(total_steps=300, config={"lr": 0.05, "model": {"width": 128, "name": "wide-net"}}, provenance=False)
    done = threading.Event()

    def steps() -> None:
        for step in range(1, 301):
            run.step(step, loss=1.0 / step)
            if done.wait(0.2):
                break

    thread = threading.Thread(target=steps, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        run.finish()


def _browser(mode: str, url: str, screenshots: Path) -> list[dict[str, object]]:
    result = subprocess.run(
        ["node", str(SCRIPT), mode, url, str(screenshots)], capture_output=True, text=True, timeout=240
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def _screenshots(tmp_path: Path) -> Path:
    screenshots = Path(os.environ.get("TRAINWIRE_SCREENSHOTS", tmp_path / "screenshots"))
    screenshots.mkdir(parents=True, exist_ok=True)
    return screenshots


def test_runs_list_run_life_and_compare_in_a_real_browser(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    first, second = _resumed(runs / "alpha-resumed")
    _failed(runs / "beta-failed")
    _stale(runs / "gamma-stale")
    with _live(runs / "delta-live"), serve(str(runs)) as server:
        reports = _browser("all", f"{server.base}/?token={server.token}", _screenshots(tmp_path))
    checks = {report["check"]: report for report in reports}
    assert list(checks) == [
        "folders and notes",
        "name and tags shown and filtered",
        "filter matches what is shown",
        "config column",
        "resumed run is one curve",
        "failed run and trial show their errors",
        "missing run leaves nothing of the previous one",
        "stale run ends at its last line",
        "compare is live, any chart, config differences, unreadable run",
    ]
    assert checks["failed run and trial show their errors"]["title"].startswith("beta sweep  ")
    assert checks["resumed run is one curve"]["chain"] == f"one curve across 2 processes: {first} → {second}"
    # steps 1-9 of the first process, the break at the resume step, steps 11-20 of the second
    assert checks["resumed run is one curve"]["points"] == 20


def test_a_single_run_directory_opens(tmp_path: Path) -> None:
    _resumed(tmp_path / "out")
    with serve(str(tmp_path / "out")) as server:
        reports = _browser("single", f"{server.base}/?token={server.token}", _screenshots(tmp_path))
    assert reports == [{"check": "single run directory", "folder": "out", "step": 20}]


def test_every_run_of_a_directory_is_listed_under_it(tmp_path: Path) -> None:
    """The README's script run twice into `out/`: the server lists both runs, the page shows both."""
    first, second = readme_run(tmp_path / "out"), readme_run(tmp_path / "out")
    with serve(str(tmp_path / "out")) as server:
        rows = server.rows()
        assert [(row["key"], row["run_id"], row["status"]) for row in rows] == [
            ("out", first, "succeeded"),
            ("out", second, "succeeded"),
        ]
        reports = _browser("twice", f"{server.base}/?token={server.token}", _screenshots(tmp_path))
    assert reports == [
        {
            "check": "every run of a directory",
            "folders": ["out", "out"],
            "runs": [first, second],
            "continued": [False, True],
        }
    ]
