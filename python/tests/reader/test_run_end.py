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
    assert row["verdict"]["duration_s"] == whole["duration_s"]  # to its last kept step

    ending = _tail_endings(tmp_path, "--run", run_id)[run_id]
    assert f"step {STEPS - 1}/{2 * STEPS}" in ending and f"best loss {BEST}" in ending

    compared = trainwire("diff", run_id, run_id, "--in", str(tmp_path)).stdout
    assert re.search(rf"best loss\s+{BEST}\s+{BEST}", compared), compared


#: a search killed inside its second trial, after a save of its journal (made at once here, as
#: every 30 s) while that trial ran: the trial's values after the save (lower than the first
#: trial's best) never count, as they do not in the whole files (the trial never ended)
KILLED_IN_TRIAL = """
import os, signal, sys, time
from pathlib import Path
import trainwire.writer.journal as journal
from trainwire import Run
out = Path(sys.argv[1])
run = Run(out, step_interval_s=0, heartbeat_interval_s=None, stop=False)
run.start(config={"search": "grid"})
run.trial_started(1, {"layers": 2})
run.step(1, loss=0.5)
run.trial_ended(1, "succeeded", metrics={"loss": 0.5})
run.trial_started(2, {"layers": 3})
run.step(2, loss=0.9)
summary = next(out.glob("runs/*")) / "summary.json"
journal.SAVE_INTERVAL_S = 0.0
run.step(3, loss=0.8)  # a save while trial 2 runs
while '"step": 3,' not in summary.read_text():
    time.sleep(0.01)
journal.SAVE_INTERVAL_S = 3600.0
for step in range(4, 400):
    run.step(step, loss=0.01)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_search_killed_in_a_trial_after_a_save_counts_none_of_that_trial(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", KILLED_IN_TRIAL, str(tmp_path)], timeout=120)
    assert done.returncode == -9
    run_id = json.loads(next(tmp_path.glob("runs/*/summary.json")).read_text())["run_id"]
    whole = _whole_file_verdicts(tmp_path)[run_id]
    assert whole["best"]["loss"]["value"] == 0.5

    row = _rows(tmp_path)[run_id]
    assert (row["status"], row["best_loss"], row["step"]) == ("stale", 0.5, 399)
    assert row["verdict"]["best"] == whole["best"]
    assert "best loss 0.5" in _tail_endings(tmp_path)[run_id]
