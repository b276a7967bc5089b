"""A running search whose stream's tail (what `runs` reads of a live run) begins inside
a trial that later failed: the failed trial's values are no best of the search on any
surface (`runs --json`, `runs`'s verdict, and the dashboard list), whatever part of the trial the window holds."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from support.cli_process import trainwire

from trainwire.reader.catalog import TAIL_BYTES, WINDOW_BYTES

#: the succeeded trial's best loss, and the failed one's (lower, so it would win if counted)
SUCCEEDED_LOSS = 0.5
FAILED_LOSS = 1.25e-05


#: a search into its second trial: trial 1 succeeds at SUCCEEDED; trial 2 logs more than three
#: windows of steps just above LOW (argument 4), lower than trial 1's best, and has not ended
INTO_TRIAL_2 = """
import os, signal, sys, time
from pathlib import Path
from trainwire import Run
out, window, succeeded, low = Path(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
run = Run(out, step_interval_s=0, stop=False)
run.start(config={"search": "grid"})
run.trial_started(1, {"layers": 2})
run.step(1, loss=0.9)
run.step(2, loss=succeeded)
run.trial_ended(1, "succeeded", metrics={"loss": succeeded})
summary = next(out.glob("runs/*")) / "summary.json"
while '"trials": {' not in summary.read_text():  # the journal saves it once a trial ends
    time.sleep(0.01)
run.trial_started(2, {"layers": 3})
stream = out / "progress.jsonl"
start_of_trial, step = stream.stat().st_size, 2
while stream.stat().st_size - start_of_trial < 3 * window:
    step += 1
    run.step(step, loss=low + 1e-3 * (1 + step % 7))
"""

#: the search's process dies mid-trial (SIGKILL, so nothing ends it): trial 2 reaches LOW (here
#: FAILED) and fails; trial 3 starts and logs a step
SEARCH = (
    INTO_TRIAL_2
    + """
run.step(step + 1, loss=low)
run.trial_ended(2, "failed", error="diverged")
run.trial_started(3, {"layers": 4})
run.step(step + 2, loss=0.7)
os.kill(os.getpid(), signal.SIGKILL)
"""
)


def _killed_search(out: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            SEARCH,
            str(out),
            str(max(TAIL_BYTES, WINDOW_BYTES)),
            str(SUCCEEDED_LOSS),
            str(FAILED_LOSS),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr


def test_a_failed_trial_seen_from_its_middle_is_no_best(tmp_path: Path) -> None:
    out = tmp_path / "search"
    _killed_search(out)
    listed = trainwire("runs", str(out), "--json")
    assert listed.returncode == 0, listed.stderr
    (row,) = json.loads(listed.stdout)
    assert row["status"] == "stale"  # its process is gone
    assert row["best_loss"] == SUCCEEDED_LOSS
    assert row["verdict"]["best"]["loss"]["value"] == SUCCEEDED_LOSS


#: the search still running its second trial: it waits, alive, until `done` exists
RUNNING = (
    INTO_TRIAL_2
    + """
print("waiting", flush=True)
while not (out / "done").exists():
    time.sleep(0.01)
run.finish()
"""
)


def test_a_running_trial_seen_from_its_middle_is_no_best_yet(tmp_path: Path) -> None:
    out = tmp_path / "search"
    child = subprocess.Popen(
        [sys.executable, "-c", RUNNING, str(out), str(max(TAIL_BYTES, WINDOW_BYTES)), str(SUCCEEDED_LOSS), "0.01"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == "waiting\n"
        listed = trainwire("runs", str(out), "--json")
        assert listed.returncode == 0, listed.stderr
        (row,) = json.loads(listed.stdout)
        assert row["status"] == "running"
        # trial 2 has not ended: none of its values is a best of the search, as in the whole stream
        assert row["best_loss"] == SUCCEEDED_LOSS
        assert row["verdict"]["best"]["loss"]["value"] == SUCCEEDED_LOSS
        whole = json.loads(trainwire("state", str(out / "progress.jsonl"), "--verdict").stdout)
        assert whole[0]["best"] == row["verdict"]["best"]
    finally:
        (out / "done").touch()
        child.wait(timeout=60)
