"""A run whose stream lost lines is never called a success (writer rule 3): real processes
whose stream cannot be opened, hits a full disk, or is cut short by a file size limit and
written again; the exit code, the one summary line on stderr and what the file holds."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.paths import ROOT, SCRIPTS
from support.stream_files import of

from trainwire.contract.models import EVENT_ADAPTER
from trainwire.writer.run import Run
from trainwire.writer.sinks import MemorySink, StdoutSink
from trainwire.writer.stream_loss import StreamLost

STEPS = 40
SUMMARY = "lost lines of its stream"


def lossy_run(output_dir: Path, *limit: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python" / "src")}
    command = [sys.executable, str(SCRIPTS / "lossy_run.py"), str(output_dir), str(STEPS), *limit]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, env=env, check=False)


def summary_line(stderr: str) -> str:
    """The one summary line of the run's end; no traceback anywhere."""
    assert "Traceback" not in stderr, stderr
    said = [line for line in stderr.splitlines() if SUMMARY in line]
    assert len(said) == 1, stderr
    return said[0]


def test_a_stream_that_cannot_be_opened_ends_the_run_failed_with_exit_code_1(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory\n")  # no one, root included, makes a directory under a file
    done = lossy_run(blocker / "out")
    assert done.returncode == 1, done.stderr
    assert done.stdout.split() == ["failed", "1"]
    line = summary_line(done.stderr)
    assert f"{STEPS + 2} of {STEPS + 2} lines lost in {blocker / 'out' / 'progress.jsonl'}" in line
    assert "NotADirectoryError" in line and line.endswith("the run ends failed, exit code 1")
    assert blocker.read_text() == "not a directory\n"


def test_a_full_disk_ends_the_run_failed_with_one_line_and_no_traceback(tmp_path: Path) -> None:
    if not os.path.exists("/dev/full"):
        pytest.fail("this test needs /dev/full (Linux)")
    output = tmp_path / "out"
    output.mkdir()
    (output / "progress.jsonl").symlink_to("/dev/full")  # every write fails with ENOSPC
    done = lossy_run(output)
    assert done.returncode == 1, done.stderr
    line = summary_line(done.stderr)
    assert f"{STEPS + 2} of {STEPS + 2} lines lost in {output / 'progress.jsonl'}" in line
    assert "No space left on device" in line
    warnings = [said for said in done.stderr.splitlines() if "could not take a line" in said]
    assert len(warnings) == 1  # then the lines lost are counted, not each told


def test_a_stream_written_again_after_a_loss_ends_failed_and_the_torn_line_stays_alone(tmp_path: Path) -> None:
    limit = 2000
    done = lossy_run(tmp_path, str(limit))
    assert done.returncode == 1, done.stderr
    assert done.stdout.split() == ["failed", "1"]
    data = (tmp_path / "progress.jsonl").read_bytes()
    lines = data.split(b"\n")
    assert lines.pop() == b""  # the file ends with a whole line
    # the line cut at the limit stays one bad line of its own: the next line starts after a `\n`
    torn = [index for index, line in enumerate(lines) if not line.endswith(b"}")]
    assert len(torn) == 1
    assert sum(len(line) + 1 for line in lines[: torn[0]]) + len(lines[torn[0]]) == limit
    whole = lines[: torn[0]] + lines[torn[0] + 1 :]
    for line in whole:
        EVENT_ADAPTER.validate_json(line, strict=True)
    events = [json.loads(line) for line in whole]
    seqs = [event["seq"] for event in events]
    assert seqs[0] == 1 and seqs[-1] == STEPS + 2 and len(seqs) < STEPS + 2  # a gap where lines were lost
    assert of(events, "train.step")[-1]["step"] == STEPS
    finished = events[-1]
    assert finished["event"] == "run.finished" and finished["status"] == "failed" and finished["exit_code"] == 1
    lost = STEPS + 2 - len(seqs)
    assert finished["error"]["type"] == "StreamLost"
    assert f"{lost} of {STEPS + 1} lines lost in {tmp_path / 'progress.jsonl'}" in finished["error"]["message"]
    line = summary_line(done.stderr)
    assert f"{lost} of {STEPS + 2} lines" in line and "written again later" in line and "File too large" in line


def test_a_strict_run_raises_when_its_stream_cannot_be_opened_or_written(tmp_path: Path) -> None:
    if not os.path.exists("/dev/full"):
        pytest.fail("this test needs /dev/full (Linux)")
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    unopened = Run(blocker / "out", strict=True, heartbeat_interval_s=None)
    with pytest.raises(StreamLost, match="NotADirectoryError"):
        unopened.start(provenance=False)  # its first line
    full = tmp_path / "full"
    full.mkdir()
    (full / "progress.jsonl").symlink_to("/dev/full")
    run = Run(full, strict=True, heartbeat_interval_s=None, journal=False)
    with pytest.raises(StreamLost, match="No space left on device") as raised:
        run.start(provenance=False)
    assert isinstance(raised.value.__cause__, OSError)
    assert Run(full, heartbeat_interval_s=None, journal=False).start(provenance=False) is None  # lenient: no raise


def test_a_stream_on_standard_output_whose_reader_went_away_ends_the_run_failed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the consumer of `--progress json` is gone: each write is EPIPE
    memory = MemorySink()
    caplog.set_level(logging.WARNING, logger="trainwire")
    with (
        os.fdopen(write_end, "wb", buffering=0) as pipe,
        Run(sinks=[StdoutSink(pipe), memory], heartbeat_interval_s=None) as run,
    ):
        run.start(total_steps=2, provenance=False)
        run.step(1)
        run.step(2)
    assert (run.status, run.exit_code) == ("failed", 1)
    finished = memory.events[-1]
    assert (
        finished["status"] == "failed"
        and "3 of 3 lines lost in standard output (BrokenPipeError" in finished["error"]["message"]
    )
    warnings = [record for record in caplog.records if record.levelno == logging.WARNING]
    assert len(warnings) == 1 and "BrokenPipeError" in warnings[0].getMessage()  # dropped at once: no retry
    errors = [record.getMessage() for record in caplog.records if record.levelno == logging.ERROR]
    assert len(errors) == 1 and "4 of 4 lines lost in standard output" in errors[0]
