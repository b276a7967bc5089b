"""The opening's deadline stops the work inside every read loop, the step file's included: a
run whose step file is 40 GB of sparse zeros past its records costs about nothing once its
deadline passed (measured in CPU time spent after it, not in wall-clock time)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from trainwire import Run
from trainwire.contract.clock import FakeClock
from trainwire.contract.layout import STEPS_FILE, STREAM_FILE, run_journal_dir
from trainwire.journal.opening import OpeningCancelled, open_from_snapshots

#: CPU seconds the opening may work before its deadline, and after it at most
BEFORE_S = 0.2
AFTER_S = 0.5


def test_an_opening_past_its_deadline_stops_inside_a_huge_sparse_step_file(tmp_path: Path) -> None:
    clock = FakeClock()
    with Run(tmp_path, clock=clock, heartbeat_interval_s=None) as run:
        run.start(total_steps=100, provenance=False)
        for step in range(1, 101):
            clock.advance(0.1)
            run.step(step, loss=1.0 / step)
    step_file = run_journal_dir(tmp_path, run.run_id) / STEPS_FILE
    os.truncate(step_file, 40 << 30)  # 40 GB past the records the snapshot covers, no disk
    deadline = time.thread_time() + BEFORE_S

    with pytest.raises(OpeningCancelled):
        open_from_snapshots(tmp_path / STREAM_FILE, within=tmp_path, cancelled=lambda: time.thread_time() > deadline)
    assert time.thread_time() - deadline < AFTER_S
