"""A run killed between two of its journal's saves, its best among the steps it logged after
the last save but before the tail each view reads of it (the last 16 KiB `runs` reads, the last
64 KiB `tail` reads of its step file): every view tells its best, its last step and its end from
all of its lines, as `state --verdict` (which reads the whole files) does; and so does the row
of such a run once a later run of its directory followed it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from support.cli_process import trainwire

from trainwire.journal.kept_steps import VIEW_TAIL_BYTES
from trainwire.reader.catalog import TAIL_BYTES

BEST = 0.001
STEPS = 4000

#: a run that logs STEPS steps (the throttle keeps most out of the stream, its journal keeps them
#: in its step file), its best at step 10, waits until the journal has kept the step before its
#: last (the last waits in the throttle), and is killed before its journal saves again (every 30 s)
KILLED = """
import os, signal, sys, time
from pathlib import Path
from trainwire import Run
out, steps, best = Path(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
run = Run(out, heartbeat_interval_s=None, stop=False)
run.start(total_steps=2 * steps)
for step in range(1, steps + 1):
    run.step(step, loss=best if step == 10 else 1.0 + (step % 7) / 10, learning_rate=1e-3)
step_file = next(out.glob("runs/*")) / "steps.jsonl"
deadline = time.monotonic() + 60
while f'"step":{steps - 1},' not in step_file.read_text() and time.monotonic() < deadline:
    time.sleep(0.01)
os.kill(os.getpid(), signal.SIGKILL)
"""

RESUMED = """
import sys
from trainwire import Run
with Run(sys.argv[1], heartbeat_interval_s=None, stop=False) as run:
    run.start(total_steps=3)
    for step in range(1, 4):
        run.step(step, loss=2.0, learning_rate=1e-3)
"""


def _killed_run(out: Path) -> str:
    done = subprocess.run([sys.executable, "-c", KILLED, str(out), str(STEPS), str(BEST)], timeout=120)
    assert done.returncode == -9
    step_file = next(out.glob("runs/*/steps.jsonl"))
    # the best is far before the ends every view reads of the run, after the journal's one save
    assert step_file.stat().st_size > 4 * max(TAIL_BYTES, VIEW_TAIL_BYTES)
    summary = json.loads(next(out.glob("runs/*/summary.json")).read_text())
    assert summary["best"] == {} and summary["status"] == "running"
    return str(summary["run_id"])


def _rows(out: Path) -> dict[str, dict[str, Any]]:
    listed = json.loads(trainwire("runs", str(out), "--json").stdout)
    rows = listed if isinstance(listed, list) else listed["rows"]
    return {row["run_id"]: row for row in rows}


def _whole_file_verdicts(out: Path) -> dict[str, dict[str, Any]]:
    verdicts = json.loads(trainwire("state", str(out / "progress.jsonl"), "--verdict").stdout)
    return {verdict["run_id"]: verdict for verdict in verdicts}


def _tail_endings(out: Path, *run: str) -> dict[str, str]:
    """The ending line `tail` prints of the run it shows (the latest, or `--run RUN_ID`), by run id."""
    endings = {}
    for line in trainwire("tail", *run, str(out)).stdout.splitlines():
        found = re.match(r"\[([^\]]+)\] (stale|succeeded).*", line)
        if found:
            endings[found.group(1)] = line
    return endings


def test_a_run_killed_between_saves_is_told_from_all_its_lines_by_every_view(tmp_path: Path) -> None:
    run_id = _killed_run(tmp_path)
    whole = _whole_file_verdicts(tmp_path)[run_id]
    assert whole["best"]["loss"]["value"] == BEST and whole["step"] == STEPS - 1

    row = _rows(tmp_path)[run_id]
    assert (row["status"], row["best_loss"], row["step"]) == ("stale", BEST, STEPS - 1)
    assert row["verdict"]["best"] == whole["best"]
    assert row["verdict"]["duration_s"] == whole["duration_s"]  # to its last kept step

    ending = _tail_endings(tmp_path)[run_id]
    assert f"step {STEPS - 1}/{2 * STEPS}" in ending and f"best loss {BEST}" in ending

    compared = trainwire("diff", run_id, run_id, "--in", str(tmp_path)).stdout
    assert re.search(rf"best loss\s+{BEST}\s+{BEST}", compared), compared


def test_a_killed_run_a_later_run_followed_is_told_from_all_its_lines(tmp_path: Path) -> None:
    run_id = _killed_run(tmp_path)
    subprocess.run([sys.executable, "-c", RESUMED, str(tmp_path)], timeout=120, check=True)
    whole = _whole_file_verdicts(tmp_path)[run_id]

    rows = _rows(tmp_path)
    assert len(rows) == 2
    row = rows[run_id]
    assert (row["status"], row["best_loss"], row["step"]) == ("stale", BEST, STEPS - 1)
    assert row["verdict"]["best"] == whole["best"]

    ending = _tail_endings(tmp_path, "--run", run_id)[run_id]
    assert f"step {STEPS - 1}/{2 * STEPS}" in ending and f"best loss {BEST}" in ending

    compared = trainwire("diff", run_id, run_id, "--in", str(tmp_path)).stdout
    assert re.search(rf"best loss\s+{BEST}\s+{BEST}", compared), compared
