"""The run's step file once the run has begun: a FIFO or a link put in its place costs one
WARNING and never stops training, a journal thread that hangs never holds training more than
about a second, and a step the throttle keeps out of the stream is on disk within a second
of being logged, so a SIGKILL loses at most the last second of steps."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from support.paths import ROOT
from support.step_files import kept_records

from trainwire import Run
from trainwire.contract.clock import FakeClock
from trainwire.contract.layout import STEPS_FILE, STREAM_FILE, run_journal_dir
from trainwire.writer import step_file

ENV = {**os.environ, "PYTHONPATH": str(ROOT / "python" / "src")}

#: steps at the default one-second throttle (nearly every one kept), the step file replaced at
#: step 2,000 by what argv[2] says, from the training loop itself
REPLACED = """
import logging, os, sys
from pathlib import Path
from trainwire import Run
logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
out, kind, outside = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
run = Run(out, heartbeat_interval_s=None)
run.start(total_steps=40_000, provenance=False)
steps = out / "runs" / run.run_id / "steps.jsonl"
for step in range(1, 40_001):
    run.step(step, loss=1.0 / step)
    if step == 2_000:
        swap = steps.with_name("steps.swap")  # made aside, then renamed over: the journal's
        os.mkfifo(swap) if kind == "fifo" else os.symlink(outside, swap)  # thread may write meanwhile
        os.replace(swap, steps)
run.finish("succeeded")
print(run.status)
"""


@pytest.mark.parametrize("kind", ["fifo", "link"])
def test_a_fifo_or_a_link_in_place_of_the_step_file_costs_one_warning_and_never_stops_training(
    tmp_path: Path, kind: str
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("someone else's file\n")
    out = tmp_path / "out"
    result = subprocess.run(
        [sys.executable, "-c", REPLACED, str(out), kind, str(outside)],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=120,  # a training thread held by the FIFO fails here
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["succeeded"]
    stream = [json.loads(line) for line in (out / STREAM_FILE).read_text().splitlines()]
    assert stream[-1]["event"] == "run.finished" and stream[-1]["status"] == "succeeded"
    warnings = [line for line in result.stderr.splitlines() if line.startswith("WARNING")]
    assert len(warnings) == 1 and "the step file" in warnings[0], result.stderr
    assert outside.read_text() == "someone else's file\n"  # nothing appended through the link
    steps = run_journal_dir(out, stream[0]["run_id"]) / STEPS_FILE
    assert steps.is_fifo() if kind == "fifo" else steps.is_symlink()
    summary = json.loads((steps.parent / "summary.json").read_text())
    assert summary["completeness"]["kept_steps_lost"] > 30_000  # the steps after the swap, counted
    assert summary["completeness"]["steps_logged"] == 40_000


def test_a_journal_thread_that_hangs_holds_training_about_a_second_at_most(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a file system that never answers: every append to the step file hangs
    hung = threading.Event()
    release = threading.Event()

    def hanging_write(self: step_file.StepFileWriter, data: bytes) -> None:
        hung.set()
        release.wait()

    monkeypatch.setattr(step_file.StepFileWriter, "_write", hanging_write)
    clock = FakeClock()
    run = Run(tmp_path, clock=clock, heartbeat_interval_s=None)
    run.start(total_steps=100_000, provenance=False)
    ended = threading.Event()
    waited: list[float] = []

    def train() -> None:
        for step in range(1, 100_001):
            clock.advance(0.001)  # a thousand steps a second: nearly all kept
            before = time.monotonic()
            run.step(step, loss=1.0 / step)
            waited.append(time.monotonic() - before)
        run.finish("succeeded")
        ended.set()

    trainer = threading.Thread(target=train, daemon=True)
    trainer.start()
    try:
        assert ended.wait(120), "training waited for the hung journal"
    finally:
        release.set()
    assert hung.is_set()
    assert run.status == "succeeded"
    assert sum(1 for wait in waited if wait > 0.5) <= 2  # once at most, not once a batch
    assert max(waited) < 5.0


#: steps one every 2 ms at the default throttle; once step 1,500 is logged it says so and waits
LOGGED_THEN_WAITS = """
import sys, time, threading
from pathlib import Path
from trainwire import Run
out = Path(sys.argv[1])
run = Run(out, heartbeat_interval_s=None)
run.start(total_steps=1_000_000, provenance=False)
for step in range(1, 1_501):
    run.step(step, loss=1.0 / step)
    time.sleep(0.002)
(out / "logged").write_text("1500")
threading.Event().wait()
"""


def test_a_sigkill_loses_at_most_the_last_second_of_kept_steps(tmp_path: Path) -> None:
    out = tmp_path / "out"
    writer = subprocess.Popen([sys.executable, "-c", LOGGED_THEN_WAITS, str(out)], env=ENV)
    try:
        deadline = time.monotonic() + 120
        while not (out / "logged").exists():
            assert writer.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        logged_at = time.monotonic()

        def on_disk() -> set[int]:
            stream = [json.loads(line) for line in (out / STREAM_FILE).read_text().splitlines()]
            streamed = {line["step"] for line in stream if line["event"] == "train.step"}
            (journal,) = (out / "runs").iterdir()
            return streamed | {record["step"] for record in kept_records(journal / STEPS_FILE)}

        # every step but the last (held by the throttle for the next line) is on disk, soon
        while on_disk() != set(range(1, 1_500)):
            assert time.monotonic() - logged_at < 3.0, f"{1_499 - len(on_disk())} logged steps not on disk"
            time.sleep(0.01)
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=30)
    assert on_disk() == set(range(1, 1_500))
