"""A training script run as a process and sent a signal once its stream reached a step."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

from stream_files import stream_of

TIMEOUT_S = 180


def signalled_after_step(
    command: list[str], stream_path: Path, step: int, sent: signal.Signals = signal.SIGTERM
) -> tuple[int, str]:
    """Runs `command`, sends `sent` once `stream_path` has a `train.step` at `step` or later,
    and returns the exit code and stderr."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + TIMEOUT_S
        while not any(line["event"] == "train.step" and line["step"] >= step for line in stream_of(stream_path)):
            assert process.poll() is None, process.communicate()[1][-4000:]
            assert time.monotonic() < deadline, "training did not start"
            time.sleep(0.05)
        process.send_signal(sent)
        _, stderr = process.communicate(timeout=TIMEOUT_S)
    finally:
        process.kill()
        process.wait()
    return process.returncode, stderr
