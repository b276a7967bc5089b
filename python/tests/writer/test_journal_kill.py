"""A writer killed at random points: every journal file is its old or its new version, never
torn (a step file's torn last line excepted, which readers skip), and `trainwire journal
rebuild` restores the summary and the snapshot from what the kill left."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.cli_process import trainwire
from support.paths import ROOT
from support.step_files import kept_records

from trainwire.contract.layout import SERIES_FILE, STEPS_FILE, SUMMARY_FILE, journal_dirs

# Saves at every batch of steps (SAVE_INTERVAL_S = 0) so a kill often lands inside one.
WRITER = """
import itertools, sys
import trainwire.writer.journal as journal
from trainwire import Run
from trainwire.contract.clock import FakeClock
journal.SAVE_INTERVAL_S = 0.0
clock = FakeClock()
run = Run(sys.argv[1], clock=clock, heartbeat_interval_s=None, step_interval_s=0.01)
run.start(config={"lr": 0.1})
for step in itertools.count(1):
    clock.advance(0.003)
    run.step(step, loss=1.0 + 1.0 / step, learning_rate=0.1, tokens_seen=step)
    if step % 200 == 0:
        run.eval(step, {"loss": 2.0 / step})
"""


def wait_for(condition, timeout_s: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "the writer did not get there in time"
        time.sleep(0.005)


def size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


@pytest.mark.parametrize("round_", range(4))
def test_a_killed_writer_leaves_whole_files_and_rebuild_restores_them(tmp_path: Path, round_: int) -> None:
    chance = random.Random(round_)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python" / "src")}
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path)], env=env)
    try:
        wait_for(lambda: len(journal_dirs(tmp_path)) == 1)
        journal = journal_dirs(tmp_path)[0]
        threshold = chance.randrange(1_000, 400_000)  # a random point in the run
        wait_for(lambda: size(journal / STEPS_FILE) >= threshold)
    finally:
        writer.send_signal(signal.SIGKILL if round_ % 2 == 0 else signal.SIGTERM)
        writer.wait(timeout=30)

    for name in (SUMMARY_FILE, SERIES_FILE):  # old or new, whole either way
        if (journal / name).exists():
            json.loads((journal / name).read_text())
    kept = (journal / STEPS_FILE).read_bytes()
    whole = kept[: kept.rfind(b"\n") + 1]
    for line in whole.splitlines():
        json.loads(line)

    result = trainwire("journal", "rebuild", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert (journal / STEPS_FILE).read_bytes() == whole  # a torn last line is cut off
    summary = json.loads((journal / SUMMARY_FILE).read_text())
    stream = (tmp_path / "progress.jsonl").read_bytes()
    stream_lines = map(json.loads, stream[: stream.rfind(b"\n") + 1].splitlines())  # a reader skips a torn last line
    stream_steps = [line["step"] for line in stream_lines if line["event"] == "train.step"]
    kept_steps = [record["step"] for record in kept_records(journal / STEPS_FILE)]
    assert summary["step"] == max(stream_steps + kept_steps) and summary["status"] == "running"
    snapshot = json.loads((journal / SERIES_FILE).read_text())
    assert snapshot["steps_offset"] == len(whole)
    assert snapshot["stream_offset"] == (tmp_path / "progress.jsonl").stat().st_size

    rebuilt = {name: (journal / name).read_bytes() for name in (SUMMARY_FILE, SERIES_FILE)}
    assert trainwire("journal", "rebuild", str(tmp_path)).returncode == 0
    assert {name: (journal / name).read_bytes() for name in rebuilt} == rebuilt  # a rebuild is a fixed point
