"""A lost stream is reported, not fatal (writer rule 3): real processes whose stream cannot be
opened, hits a full disk, or is cut short by a file size limit and written again. The
training's own outcome decides the status and the exit code; the loss is one WARNING when it
happens, one line at the end, and the summary's `completeness` where the journal can write."""

from __future__ import annotations

import itertools
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli_process import trainwire
from support.paths import ROOT, SCRIPTS
from support.stream_files import of

from trainwire.contract.models import EVENT_ADAPTER
from trainwire.journal.files import read_summary
from trainwire.writer.run import Run
from trainwire.writer.sinks import MemorySink, StdoutSink
from trainwire.writer.stream_loss import StreamLost

STEPS = 40
LINES = STEPS + 2  # run.started, the steps, run.finished
AT_THE_LOSS = "the stream could not be written to"
AT_THE_END = "but its stream is incomplete"


def lossy_run(output_dir: Path, *arguments: str, obeying_modes: bool = False) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python" / "src")}
    command = [sys.executable, str(SCRIPTS / "lossy_run.py"), str(output_dir), str(STEPS), *arguments]
    if obeying_modes and os.geteuid() == 0:  # root writes anywhere unless it gives up the override
        command = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", *command]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, env=env, check=False)


def said_once(stderr: str, words: str) -> str:
    """The one line of stderr holding `words`; no traceback and no internal name anywhere."""
    assert "Traceback" not in stderr and "UnopenedStreamFile" not in stderr and "Sink(" not in stderr, stderr
    said = [line for line in stderr.splitlines() if words in line]
    assert len(said) == 1, stderr
    return said[0]


def is_json(line: bytes) -> bool:
    try:
        json.loads(line)
    except ValueError:  # UnicodeDecodeError too: a line cut inside a character
        return False
    return True


def completeness(output_dir: Path) -> dict[str, object]:
    summary = read_summary(output_dir / "runs" / "lossy" / "summary.json")  # its schema accepts it
    assert summary is not None
    return summary["completeness"]


def test_a_stream_that_cannot_be_opened_leaves_the_training_s_outcome_and_exit_code(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory\n")  # no one, root included, makes a directory under a file
    stream = blocker / "out" / "progress.jsonl"
    done = lossy_run(blocker / "out")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["succeeded", "0"]
    warning = said_once(done.stderr, AT_THE_LOSS)
    assert f"{stream} (Not a directory)" in warning and "training goes on" in warning
    end = said_once(done.stderr, AT_THE_END)
    assert "run lossy succeeded (exit code 0)" in end and f"{LINES} of {LINES} lines lost in {stream}" in end
    assert blocker.read_text() == "not a directory\n"


def test_a_read_only_directory_loses_the_stream_and_the_run_still_succeeds(tmp_path: Path) -> None:
    output = tmp_path / "read-only"
    output.mkdir()
    output.chmod(0o555)
    try:
        done = lossy_run(output, obeying_modes=True)
    finally:
        output.chmod(0o755)
    assert done.returncode == 0 and done.stdout.split() == ["succeeded", "0"], done.stderr
    assert f"{output / 'progress.jsonl'} (Permission denied)" in said_once(done.stderr, AT_THE_LOSS)
    end = said_once(done.stderr, AT_THE_END)
    assert f"{LINES} of {LINES} lines lost in {output / 'progress.jsonl'} (Permission denied)" in end
    assert list(output.iterdir()) == []  # nothing could be written: the end line is the record


def test_a_stream_file_that_cannot_be_opened_in_a_writable_directory_is_recorded_in_the_summary(
    tmp_path: Path,
) -> None:
    (tmp_path / "progress.jsonl").mkdir()  # the stream's name taken by a directory: no one opens it as a file
    done = lossy_run(tmp_path)
    assert done.returncode == 0 and done.stdout.split() == ["succeeded", "0"], done.stderr
    assert "(Is a directory)" in said_once(done.stderr, AT_THE_LOSS)
    assert "could not be written" not in done.stderr.replace(AT_THE_LOSS, "")  # the journal could
    summary = read_summary(tmp_path / "runs" / "lossy" / "summary.json")
    assert summary is not None and (summary["status"], summary["exit_code"]) == ("succeeded", 0)
    assert summary["completeness"]["stream_lines_lost"] == LINES
    assert summary["completeness"]["reason"].endswith("progress.jsonl (Is a directory)")
    (tmp_path / "progress.jsonl").rmdir()
    (tmp_path / "progress.jsonl").write_bytes(b"")  # a stream holding no line of the run: its journal does
    state = trainwire("state", str(tmp_path))
    assert state.returncode == 0 and json.loads(state.stdout)["runs"] == []
    assert state.stderr == f"trainwire state: run lossy: stream incomplete: {LINES} of {LINES} lines lost\n"


def test_a_training_that_fails_on_a_lost_stream_exits_as_it_failed(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    done = lossy_run(blocker / "out", "0", "fail")
    assert done.returncode == 1 and done.stdout.split() == ["failed", "1"]
    assert "run lossy failed (exit code 1)" in said_once(done.stderr, AT_THE_END)


def test_a_full_disk_is_one_warning_one_end_line_and_the_summary_s_completeness(tmp_path: Path) -> None:
    if not os.path.exists("/dev/full"):
        pytest.fail("this test needs /dev/full (Linux)")
    output = tmp_path / "out"
    output.mkdir()
    (output / "progress.jsonl").symlink_to("/dev/full")  # every write fails with ENOSPC
    done = lossy_run(output)
    assert done.returncode == 0, done.stderr
    assert "No space left on device" in said_once(done.stderr, AT_THE_LOSS)
    assert f"{LINES} of {LINES} lines lost in {output / 'progress.jsonl'}" in said_once(done.stderr, AT_THE_END)
    # nothing of the run reached the stream: its journal still says how it began and ended
    summary = read_summary(output / "runs" / "lossy" / "summary.json")
    assert summary is not None and (summary["status"], summary["exit_code"], summary["step"]) == ("succeeded", 0, 40)
    assert summary["completeness"] == {
        "stream_lines": LINES,
        "stream_lines_lost": LINES,
        "steps_logged": 40,  # the journal counts them, the stream lost them all
        "kept_steps_lost": 0,
        "reason": f"stream lines lost in {output / 'progress.jsonl'} (No space left on device)",
    }


def test_a_stream_written_again_after_a_loss_ends_as_the_training_did_and_every_surface_says_the_loss(
    tmp_path: Path,
) -> None:
    limit = 2000
    done = lossy_run(tmp_path, str(limit))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["succeeded", "0"]
    data = (tmp_path / "progress.jsonl").read_bytes()
    lines = data.split(b"\n")
    assert lines.pop() == b""  # the file ends with a whole line
    # the line cut at the limit stays one bad line of its own: the next line starts after a `\n`
    torn = [index for index, line in enumerate(lines) if line and not is_json(line)]
    ends = set(itertools.accumulate(len(line) + 1 for line in lines))  # the offsets just after each `\n`
    if torn:
        assert len(torn) == 1
        assert sum(len(line) + 1 for line in lines[: torn[0]]) + len(lines[torn[0]]) == limit
        whole = lines[: torn[0]] + lines[torn[0] + 1 :]
    else:  # a line ended at the limit (their lengths vary with the run's pid, paths, times): with its
        # `\n`, or without it and made whole by the `\n` the next line began with
        assert limit in ends or (limit + 1 in ends and data[limit : limit + 1] == b"\n")
        whole = lines
    whole = [line for line in whole if line]  # a failed write may leave a blank line
    for line in whole:
        EVENT_ADAPTER.validate_json(line, strict=True)
    events = [json.loads(line) for line in whole]
    seqs = [event["seq"] for event in events]
    assert seqs[0] == 1 and seqs[-1] == LINES and len(seqs) < LINES  # a gap where lines were lost
    assert of(events, "train.step")[-1]["step"] == STEPS
    finished = events[-1]
    assert finished["event"] == "run.finished" and finished["status"] == "succeeded" and finished["exit_code"] == 0
    assert "error" not in finished or finished["error"] is None
    lost = LINES - len(seqs)
    end = said_once(done.stderr, AT_THE_END)
    assert f"{lost} of {LINES} lines" in end and "written again later" in end and "File too large" in end
    assert completeness(tmp_path)["stream_lines_lost"] == lost
    assert completeness(tmp_path)["stream_lines"] == LINES
    shown = f"stream incomplete: {lost} of {LINES} lines lost"

    runs = trainwire("runs", str(tmp_path))
    assert runs.returncode == 0 and f"succeeded, {shown}" in runs.stdout, runs.stdout + runs.stderr
    listed = json.loads(trainwire("runs", "--json", str(tmp_path)).stdout)
    assert listed[0]["completeness"]["stream_lines_lost"] == lost
    state = trainwire("state", str(tmp_path))
    assert json.loads(state.stdout)["runs"][0]["status"] == "succeeded"
    assert state.stderr == f"trainwire state: run lossy: {shown}\n"
    tail = trainwire("tail", str(tmp_path))
    assert tail.returncode == 0 and f"[lossy] succeeded, {shown}: step 40/40" in tail.stdout, tail.stdout


def test_a_strict_run_raises_when_its_stream_cannot_be_opened_or_written(tmp_path: Path) -> None:
    if not os.path.exists("/dev/full"):
        pytest.fail("this test needs /dev/full (Linux)")
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    unopened = Run(blocker / "out", strict=True, heartbeat_interval_s=None)
    with pytest.raises(StreamLost, match="Not a directory"):
        unopened.start(provenance=False)  # its first line
    full = tmp_path / "full"
    full.mkdir()
    (full / "progress.jsonl").symlink_to("/dev/full")
    run = Run(full, strict=True, heartbeat_interval_s=None, journal=False)
    with pytest.raises(StreamLost, match="No space left on device") as raised:
        run.start(provenance=False)
    assert isinstance(raised.value.__cause__, OSError)
    assert Run(full, heartbeat_interval_s=None, journal=False).start(provenance=False) is None  # lenient: no raise


def test_a_stream_on_standard_output_whose_reader_went_away_is_said_and_the_run_succeeds(
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
    assert (run.status, run.exit_code) == ("succeeded", 0)
    finished = memory.events[-1]
    assert finished["status"] == "succeeded" and finished.get("error") is None
    warnings = [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]
    assert len(warnings) == 2, warnings  # at the loss (dropped at once: no retry), and at the end
    assert "could not be written to standard output (Broken pipe)" in warnings[0]
    assert "no more lines go there" in warnings[0]
    assert "4 of 4 lines lost in standard output (Broken pipe)" in warnings[1]
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR]


def test_journal_rebuild_keeps_what_the_writer_knew_was_lost(tmp_path: Path) -> None:
    done = lossy_run(tmp_path, "2000")
    assert done.returncode == 0, done.stderr
    before = completeness(tmp_path)
    rebuilt = trainwire("journal", "rebuild", str(tmp_path))
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert completeness(tmp_path) == before and before["stream_lines_lost"] > 0


# Three lines through a real file, as the stream file or as standard output, whose size limit
# cuts the stream at `cut` bytes until the second line is lost; the limit is lifted for the
# third. The child writes what the writer counts lost, and the stream part of its completeness.
CUT_STREAM = """
import json, os, resource, signal, sys
from trainwire.writer.sinks import Dispatcher, FileSink, OwnedStdoutSink
path, cut, sink = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if sink == "stdout":
    os.dup2(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT), 1)
hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
dispatcher = Dispatcher([FileSink(path) if sink == "file" else OwnedStdoutSink()])
resource.setrlimit(resource.RLIMIT_FSIZE, (cut, hard))
dispatcher.dispatch(b'{"a":1}\\n', {})
dispatcher.dispatch(b'{"b":2}\\n', {})
resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))
dispatcher.dispatch(b'{"c":3}\\n', {})
dispatcher.close()
counted = [loss.lost(dispatcher.dispatched) for loss in dispatcher.lost_lines()]
with open(path + ".counted", "w") as out:
    json.dump([counted, dispatcher.completeness()], out)
"""


@pytest.mark.parametrize("sink", ["file", "stdout"])
@pytest.mark.parametrize(
    ("cut", "stream", "lost"),
    [
        (4, b'{"a"\n{"c":3}\n', 2),  # the first line torn: one bad line, then the third
        (7, b'{"a":1}\n{"c":3}\n', 1),  # all of the first line but its `\n`: the third line's `\n` ends it
        (8, b'{"a":1}\n\n{"c":3}\n', 1),  # nothing of the second line: at worst a blank line
        (15, b'{"a":1}\n{"b":2}\n{"c":3}\n', 0),  # the second line but its `\n`: nothing lost in the end
    ],
)
def test_the_lines_counted_lost_are_those_a_reader_finds_missing(
    tmp_path: Path, cut: int, stream: bytes, lost: int, sink: str
) -> None:
    path = tmp_path / "progress.jsonl"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python" / "src")}
    command = [sys.executable, "-c", CUT_STREAM, str(path), str(cut), sink]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert path.read_bytes() == stream
    counted, stream_completeness = json.loads((tmp_path / "progress.jsonl.counted").read_text())
    readable = [line for line in stream.split(b"\n") if line and is_json(line)]
    assert 3 - len(readable) == lost
    if lost:
        assert counted == [lost] and stream_completeness["stream_lines_lost"] == lost
    else:  # the warning was said when the write failed; at the end nothing is lost
        assert counted == [] and stream_completeness is None
