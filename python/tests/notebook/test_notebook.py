"""Runs in Jupyter: `_repr_html_` snapshots and `watch` updating one output through IPython display handles."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from trainwire.contract.clock import FakeClock
from trainwire.notebook import FollowedRun, watch
from trainwire.reader.state import StreamReader, read_state
from trainwire.writer.run import Run


def started_run(directory: Path, run_id: str = "nb-run") -> tuple[Run, FakeClock]:
    clock = FakeClock("2026-11-29T10:00:00Z")
    run = Run(directory, run_id=run_id, clock=clock, step_interval_s=0, heartbeat_interval_s=None)
    run.start(total_steps=10, provenance=False)
    return run, clock


def steps(run: Run, clock: FakeClock, numbers: range) -> None:
    for step in numbers:
        clock.advance(1)
        run.step(step, loss=2.0 / step, learning_rate=1e-3)


def test_a_run_state_displays_as_an_escaped_table(tmp_path: Path) -> None:
    run, clock = started_run(tmp_path)
    steps(run, clock, range(1, 4))
    run.checkpoint(3, tmp_path / "ckpt<b>", reason="periodic")
    run.finish("succeeded")
    reader = StreamReader()
    reader.feed((tmp_path / "progress.jsonl").read_bytes())
    page = reader.runs[0]._repr_html_()
    assert "<td style='text-align:left'>nb-run</td>" in page and "succeeded" in page and "3/10 (30%)" in page
    assert "ckpt&lt;b&gt;" in page and "ckpt<b>" not in page


def test_a_followed_run_reads_new_lines_on_each_display(tmp_path: Path) -> None:
    run, clock = started_run(tmp_path)
    steps(run, clock, range(1, 3))
    followed = FollowedRun(tmp_path)
    first = followed._repr_html_()
    assert "2/10 (20%)" in first and "running" in first and first.count("<polyline") == 1
    steps(run, clock, range(3, 6))
    run.finish("succeeded")
    second = followed._repr_html_()
    assert "5/10 (50%)" in second and "succeeded" in second
    assert "steps 1 to 5" in second  # the chart grew with the run
    followed.close()


def test_watch_updates_one_output_until_the_run_finishes(tmp_path: Path) -> None:
    InteractiveShell.instance()
    run, clock = started_run(tmp_path)
    steps(run, clock, range(1, 2))
    result: list[object] = []
    with capture_output() as captured:
        watcher = threading.Thread(target=lambda: result.append(watch(tmp_path, interval_s=0.02)))
        watcher.start()
        deadline = time.monotonic() + 60
        while not captured.outputs and time.monotonic() < deadline:
            time.sleep(0.01)  # until the first display is out: what follows must come as updates
        steps(run, clock, range(2, 8))
        run.finish("succeeded")
        watcher.join(timeout=60)
    assert not watcher.is_alive()
    outputs = captured.outputs
    assert len(outputs) >= 2 and not outputs[0].update and all(output.update for output in outputs[1:])
    ids = {output.transient["display_id"] for output in outputs}
    assert len(ids) == 1  # one cell output, updated in place
    assert "succeeded" in outputs[-1].data["text/html"] and "7/10 (70%)" in outputs[-1].data["text/html"]
    (state,) = result
    assert state is not None and state.status == "succeeded"  # type: ignore[attr-defined]
    assert read_state((tmp_path / "progress.jsonl").read_bytes())["runs"][0]["step"] == 7
