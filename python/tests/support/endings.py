"""The endings of the endings matrix (python/tests/endings): one small search
(`scripts/ending_run.py`) run as a real process per ending, ended by itself, by an
exception, by the control file, by a real signal, killed, stopped (a host gone silent), or
short of disk (RLIMIT_FSIZE), all at once so that the session pays for the slowest only.
"""

from __future__ import annotations

import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from support.paths import SCRIPTS
from trainwire.contract.clock import now_us
from trainwire.reader.catalog import run_rows
from trainwire.stop import request_stop

SCRIPT = SCRIPTS / "ending_run.py"
TIMEOUT_S = 60
#: bytes a `full_disk` run may write into any one file: the stream fills up during the search
FULL_DISK_BYTES = 3000

#: each ending -> what the test does once the run saved its checkpoint (None: nothing, it ends by itself)
ENDINGS: dict[str, Callable[[subprocess.Popen[str], Path], None] | None] = {
    "succeeded": None,
    "failed": None,
    "control_file": lambda process, out: request_stop(out, reason="enough", requested_by="endings"),
    "sigint": lambda process, out: process.send_signal(signal.SIGINT),
    "sigterm": lambda process, out: process.send_signal(signal.SIGTERM),
    "sigkill": lambda process, out: process.send_signal(signal.SIGKILL),
    "silent": lambda process, out: process.send_signal(signal.SIGSTOP),
    "full_disk": None,
}


@dataclass(frozen=True)
class Ending:
    """A run that ended one way: its output directory, run id and the process's exit code
    (None for the `silent` one, stopped and still there)."""

    name: str
    out: Path
    run_id: str
    returncode: int | None


def _full_disk() -> None:
    """In the child: files stop growing at `FULL_DISK_BYTES`, with EFBIG rather than SIGXFSZ."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (FULL_DISK_BYTES, FULL_DISK_BYTES))


def produce(root: Path) -> tuple[dict[str, Ending], list[subprocess.Popen[str]]]:
    """Every ending, under `root/<ending>`; the processes are returned for the caller to reap."""
    processes: dict[str, subprocess.Popen[str]] = {}
    for name in ENDINGS:
        out = root / name
        out.mkdir()
        processes[name] = subprocess.Popen(
            [sys.executable, str(SCRIPT), str(out), name],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=_full_disk if name == "full_disk" else None,  # noqa: PLW1509 - a limit of the child only
        )
    endings = {}
    for name, act in ENDINGS.items():
        process, out = processes[name], root / name
        assert process.stdout is not None
        if act is not None:
            assert process.stdout.readline() == "ready\n", process.stderr.read() if process.stderr else ""
            act(process, out)
        returncode = None
        if name == "silent":
            _wait_for(lambda out=out: _status(out) == "stale")  # three heartbeat intervals of silence
        else:
            returncode = process.wait(timeout=TIMEOUT_S)
        endings[name] = Ending(name, out, _run_id(out), returncode)
    return endings, list(processes.values())


def reap(processes: list[subprocess.Popen[str]]) -> None:
    for process in processes:
        if process.poll() is None:
            process.kill()  # the silent one, stopped
        process.communicate()


def _run_id(out: Path) -> str:
    (row,) = run_rows(out / "progress.jsonl", now_us())
    return row["run_id"]


def _status(out: Path) -> str | None:
    rows = run_rows(out / "progress.jsonl", now_us())
    return rows[-1]["status"] if rows else None


def _wait_for(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while not condition():
        assert time.monotonic() < deadline, "the ending never came"
        time.sleep(0.05)
