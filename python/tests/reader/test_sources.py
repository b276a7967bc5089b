"""trainwire.reader.sources: following a growing file and reading a process's output."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from trainwire.reader.sources import FileFollower, read_process


def wait_for(condition: Callable[[], bool], timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


class Follow:
    """Runs a FileFollower in a thread and collects what it yields, reset by reset."""

    def __init__(self, path: Path, offset: int = 0) -> None:
        self.stop = threading.Event()
        self.resets: list[str] = []
        self.received = b""
        self.follower = FileFollower(path, offset=offset, poll_interval_s=0.01, stop=self.stop, on_reset=self._on_reset)
        self._lock = threading.Lock()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _on_reset(self, reason: str) -> None:
        with self._lock:
            self.resets.append(reason)
            self.received = b""

    def _run(self) -> None:
        for chunk in self.follower:
            with self._lock:
                self.received += chunk

    def has(self, data: bytes) -> Callable[[], bool]:
        return lambda: self.received == data

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=10)
        assert not self.thread.is_alive()


def append(path: Path, data: bytes) -> None:
    with open(path, "ab") as handle:
        handle.write(data)


def test_a_file_created_late_then_appended_truncated_and_replaced(tmp_path: Path) -> None:
    path = tmp_path / "progress.jsonl"
    follow = Follow(path)
    try:
        time.sleep(0.03)  # a few polls with no file
        append(path, b"line 1\n")
        wait_for(follow.has(b"line 1\n"))
        append(path, b"line 2\npart")
        wait_for(follow.has(b"line 1\nline 2\npart"))

        path.write_bytes(b"new\n")  # truncated (shorter than what was read)
        wait_for(follow.has(b"new\n"))
        assert follow.resets == ["truncated"]

        replacement = tmp_path / "progress.jsonl.tmp"
        replacement.write_bytes(b"replaced 1\n")
        os.replace(replacement, path)  # a new inode at the same path
        wait_for(follow.has(b"replaced 1\n"))
        append(path, b"replaced 2\n")
        wait_for(follow.has(b"replaced 1\nreplaced 2\n"))
        assert follow.resets == ["truncated", "replaced"] and follow.follower.resets == 2
    finally:
        follow.close()


def test_following_from_an_offset_reads_only_the_new_bytes(tmp_path: Path) -> None:
    path = tmp_path / "progress.jsonl"
    path.write_bytes(b"old line\n" * 1000)
    follow = Follow(path, offset=9000)
    try:
        append(path, b"fresh\n")
        wait_for(follow.has(b"fresh\n"))
        assert follow.follower.offset == 9006 and follow.resets == []
    finally:
        follow.close()


def test_an_offset_beyond_the_end_means_the_file_was_truncated(tmp_path: Path) -> None:
    path = tmp_path / "progress.jsonl"
    path.write_bytes(b"short\n")
    follow = Follow(path, offset=1000)
    try:
        wait_for(follow.has(b"short\n"))
        assert follow.resets == ["truncated"]
    finally:
        follow.close()


def test_stop_ends_the_follower_while_the_file_does_not_exist(tmp_path: Path) -> None:
    follow = Follow(tmp_path / "never.jsonl")
    follow.close()
    assert follow.received == b""


def test_a_process_output_arrives_while_the_process_still_runs() -> None:
    script = (
        "import sys\nsys.stdout.buffer.write(b'first\\n'); sys.stdout.flush()\nsys.stdin.readline()\nprint('second')"
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None
    chunks = read_process(child)
    assert next(chunks) == b"first\n"  # the process is blocked on stdin: it has not exited
    assert child.poll() is None
    child.stdin.write(b"go\n")
    child.stdin.close()
    assert b"".join(chunks) == b"second\n"
    assert child.wait() == 0


def test_read_process_needs_a_pipe() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        with pytest.raises(ValueError):
            next(read_process(child))
    finally:
        child.wait()
