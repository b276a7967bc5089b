"""A Ray Train `TorchTrainer` job of 2 CPU workers (gloo) writing one stream from rank 0,
stopped by a SIGTERM sent to its driver: every worker stops at the same step, the run ends
`interrupted` and the driver exits 2. The driver is its own process with its own local Ray
(the one Ray of this module)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from support.paths import SCRIPTS
from support.stopped_processes import signalled_after_step
from support.stream_files import stream_of

MAX_STEPS = 2000  # far more than a stopped job reaches


def test_sigterm_on_the_driver_stops_every_worker_at_the_same_step(tmp_path: Path) -> None:
    command = [sys.executable, str(SCRIPTS / "ray_train_driver.py"), str(tmp_path), str(MAX_STEPS)]
    code, stderr = signalled_after_step(command, tmp_path / "progress.jsonl", 3)
    assert code == 2, stderr[-4000:]
    events = stream_of(tmp_path / "progress.jsonl")
    assert events[0]["event"] == "run.started" and events[0]["world_size"] == 2
    steps = [event["step"] for event in events if event["event"] == "train.step"]
    assert steps == list(range(1, len(steps) + 1)) and len(steps) < MAX_STEPS  # one writer: each step once
    stops = [event for event in events if event["event"] == "stop.requested"]
    assert [(stop["source"], stop["reason"]) for stop in stops] == [("control_file", "SIGTERM on the Ray Train driver")]
    finished = [event for event in events if event["event"] == "run.finished"]
    assert finished == [events[-1]] and (finished[0]["status"], finished[0]["reason"]) == (
        "interrupted",
        "control_file",
    )
    ranks = [json.loads((tmp_path / f"rank-{rank}.json").read_text()) for rank in (0, 1)]
    assert ranks == [{"step": steps[-1], "status": "interrupted"}] * 2
