"""A FIFO (or a device) in a stream's place: every command that reads the stream, followed or
whole (`tail`, `tail --follow`, `state`, the exports), says so in one line and exits instead
of blocking forever in `open`, as the server's checked opening does (`open_regular`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.paths import ROOT

from trainwire import Run

#: a command blocked in `open` never ends: the guard that fails the test instead
_GUARD_S = 60


def _finished_run(directory: Path) -> None:
    with Run(directory, step_interval_s=0, heartbeat_interval_s=None) as run:
        run.start(total_steps=3, config={"lr": 0.1}, provenance=False)
        for step in range(1, 4):
            run.step(step, loss=1.0 / step)


def _trainwire(*arguments: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python" / "src")}
    try:
        return subprocess.run(
            [sys.executable, "-m", "trainwire", *arguments],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=_GUARD_S,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"trainwire {' '.join(arguments)} blocked on the FIFO for {_GUARD_S} s")


@pytest.mark.parametrize(
    "arguments",
    [
        ("tail", "out"),
        ("tail", "out", "--follow", "--timeout", "30"),
        ("state", "out/progress.jsonl"),
        ("export", "tensorboard", "out", "--logdir", "tb"),
        ("export", "tensorboard", "out", "--logdir", "tb", "--follow"),
    ],
    ids=["tail", "tail-follow", "state", "export", "export-follow"],
)
def test_a_fifo_in_the_streams_place_is_one_line_not_a_hang(tmp_path: Path, arguments: tuple[str, ...]) -> None:
    _finished_run(tmp_path / "out")
    stream = tmp_path / "out" / "progress.jsonl"
    stream.unlink()
    os.mkfifo(stream)  # no writer ever opens it: a plain `open` for reading waits for one forever
    done = _trainwire(*arguments, cwd=tmp_path)
    assert done.returncode != 0
    assert "not a regular file" in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


_SWAPPED = """
import os, sys
from pathlib import Path
from trainwire.contract.files import NotARegularFile
from trainwire.reader.sources import FileFollower, read_file

path = Path(sys.argv[1])
path.write_bytes(b"first\\n")
follower = iter(FileFollower(path, poll_interval_s=0, yield_when_idle=True))
assert next(follower) == b"first\\n"
path.unlink()
os.mkfifo(path)  # the follower opens the file again once it is replaced: the new one is checked too
try:
    while True:
        next(follower)
except NotARegularFile as error:
    print("refused:", error)
try:
    list(read_file(Path("/dev/zero")))  # a device: would never end
except NotARegularFile as error:
    print("refused:", error)
"""


def test_a_fifo_swapped_in_while_followed_and_a_device_are_refused(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python" / "src")}
    try:
        done = subprocess.run(
            [sys.executable, "-c", _SWAPPED, str(tmp_path / "progress.jsonl")],
            env=env,
            capture_output=True,
            text=True,
            timeout=_GUARD_S,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the follower blocked on the FIFO for {_GUARD_S} s")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("not a regular file") == 2, done.stdout
