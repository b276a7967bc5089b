"""A run killed with SIGKILL, its heartbeat interval the default 30 s: every surface calls it
`stale` at once (its own host proves its process gone), and its duration stops at its last
line (of its stream, or a step its journal kept after it) instead of growing with the clock."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.paths import ROOT
from support.step_files import kept_records
from support.stopped_processes import stopped_when
from support.stream_files import stream_of

from trainwire.contract.clock import parse_timestamp_us
from trainwire.contract.layout import STEPS_FILE
from trainwire.contract.process_proof import liveness_of, this_process

#: a loop with the default heartbeat interval (30 s): without the proof a reader waits 90 s
LOOP = (
    "import sys, time\n"
    "from trainwire import Run\n"
    "run = Run(sys.argv[1])\n"
    "run.start(total_steps=1000, provenance=False)\n"
    "for step in range(1, 1001):\n"
    "    run.step(step, loss=1.0 / step)\n"
    "    time.sleep(0.01)\n"
)


def trainwire(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trainwire", *arguments], capture_output=True, text=True, timeout=60, cwd=ROOT
    )


@pytest.fixture(scope="module")
def killed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("killed")
    stream = out / "progress.jsonl"
    ended = stopped_when(
        [sys.executable, "-c", LOOP, str(out)],
        lambda: sum(line["event"] == "train.step" for line in stream_of(stream)) >= 2,
        lambda process: process.send_signal(signal.SIGKILL),
    )
    assert ended.returncode == -signal.SIGKILL
    return out


def test_every_surface_says_stale_at_once_and_the_duration_stops_at_the_last_line(killed: Path) -> None:
    lines = stream_of(killed / "progress.jsonl")
    # the steps the throttle kept out of the stream reach the step file within a second: the
    # kill may come before or after some of them land, and the last of them is the run's last line
    kept = [record["ts"] for path in killed.glob(f"runs/*/{STEPS_FILE}") for record in kept_records(path)]
    started = parse_timestamp_us(lines[0]["ts"])
    last = max(parse_timestamp_us(ts) for ts in [lines[-1]["ts"], *kept])
    (row,) = json.loads(trainwire("runs", "--json", str(killed)).stdout)
    assert (row["status"], row["verdict"]["liveness"]) == ("stale", "gone")  # not `running` for 3 intervals
    assert row["duration_s"] == pytest.approx((last - started) / 1e6, abs=1e-6)
    (verdict,) = json.loads(trainwire("state", "--verdict", str(killed)).stdout)  # no clock, yet a proof
    assert (verdict["status"], verdict["liveness"], verdict["judged_at"]) == ("stale", "gone", None)
    tail = trainwire("tail", str(killed))
    assert tail.stdout.splitlines()[-1].split(":")[0].endswith("stale (process gone)")
    time.sleep(1.1)  # the one wait here: the clock must move for a growing duration to show
    (again,) = json.loads(trainwire("runs", "--json", str(killed)).stdout)
    assert again["duration_s"] == row["duration_s"]


def test_a_reused_pid_or_another_boot_or_namespace_proves_nothing_alive() -> None:
    alive = this_process()
    assert liveness_of(alive) == "alive"
    assert liveness_of({**alive, "start_time": "1"}) == "gone"  # the pid now names a later process
    assert liveness_of({**alive, "boot_id": "another-boot"}) == "unknown"
    assert liveness_of({**alive, "pid_namespace": "pid:[1]"}) == "unknown"  # another container's pid
    assert liveness_of({**alive, "host": "elsewhere"}) == "unknown"
    assert liveness_of(None) == "unknown"
