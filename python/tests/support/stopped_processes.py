"""A training script run as a process and stopped once its stream reached a step."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from support.stream_files import stream_of

TIMEOUT_S = 180  # a hang fails the test instead of blocking the suite


def stopped_after_step(
    command: list[str], stream_path: Path, step: int, stop: Callable[[subprocess.Popen[str]], None]
) -> subprocess.CompletedProcess[str]:
    """Runs `command`, calls `stop(process)` once `stream_path` has a `train.step` at `step`
    or later, and returns how the process ended."""
    return stopped_when(
        command,
        lambda: any(line["event"] == "train.step" and line["step"] >= step for line in stream_of(stream_path)),
        stop,
    )


def stopped_when(
    command: list[str], ready: Callable[[], bool], stop: Callable[[subprocess.Popen[str]], None]
) -> subprocess.CompletedProcess[str]:
    """Runs `command`, calls `stop(process)` once `ready()` holds, and returns how the process ended."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + TIMEOUT_S
        while not ready():
            assert process.poll() is None, process.communicate()[1][-4000:]
            assert time.monotonic() < deadline, "training did not start"
            time.sleep(0.05)
        stop(process)
        stdout, stderr = process.communicate(timeout=TIMEOUT_S)
    finally:
        process.kill()
        process.wait()
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def signalled_after_step(
    command: list[str], stream_path: Path, step: int, sent: signal.Signals = signal.SIGTERM
) -> tuple[int, str]:
    """Runs `command`, sends `sent` once `stream_path` has a `train.step` at `step` or later,
    and returns the exit code and stderr."""
    ended = stopped_after_step(command, stream_path, step, lambda process: process.send_signal(sent))
    return ended.returncode, ended.stderr
