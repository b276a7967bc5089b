"""`progress_arguments` and `run_from_arguments` in a real tool process: plain leaves its output
byte for byte, json keeps standard output pure NDJSON, a file leaves standard output alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.paths import SCRIPTS
from support.stream_files import stream_of

from trainwire.contract.models import EVENT_ADAPTER
from trainwire.reader.sources import read_process
from trainwire.reader.state import StreamReader

TOOL = SCRIPTS / "progress_tool.py"
TOOL_OUTPUT = [
    "tool: starting",
    *[line for step in (1, 2, 3) for line in (f"tool: step {step}", f"log: step {step} done", f"raw: step {step}")],
    "child: hello",
    "tool: done",
]


def tool(*arguments: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, str(TOOL), *arguments], capture_output=True, timeout=120, check=True)


def test_plain_leaves_the_tools_output_unchanged_byte_for_byte() -> None:
    alone = tool("--without-trainwire")
    plain = tool("--progress", "plain")
    assert plain.stdout == alone.stdout and plain.stderr == alone.stderr == b""
    assert sorted(alone.stdout.decode().splitlines()) == sorted(TOOL_OUTPUT)


def test_json_keeps_standard_output_pure_and_moves_everything_else_to_stderr() -> None:
    result = tool("--progress", "json")
    lines = result.stdout.decode().splitlines()
    events = [EVENT_ADAPTER.validate_json(line, strict=True).event for line in lines]
    assert events == ["run.started", "train.step", "train.step", "train.step", "run.finished"]
    assert sorted(result.stderr.decode().splitlines()) == sorted(TOOL_OUTPUT)  # before, during and after the run


def test_a_progress_file_after_json_gives_standard_output_back(tmp_path: Path) -> None:
    result = tool("--progress", "json", "--progress-file", str(tmp_path / "p.jsonl"))
    assert sorted(result.stdout.decode().splitlines()) == sorted(TOOL_OUTPUT) and result.stderr == b""
    assert len(stream_of(tmp_path / "p.jsonl")) == 5


def test_a_progress_file_leaves_standard_output_to_the_tool(tmp_path: Path) -> None:
    stream = tmp_path / "progress.jsonl"
    result = tool("--progress-file", str(stream))
    assert sorted(result.stdout.decode().splitlines()) == sorted(TOOL_OUTPUT)
    assert [line["event"] for line in stream_of(stream)] == [
        "run.started",
        "train.step",
        "train.step",
        "train.step",
        "run.finished",
    ]


def test_a_progress_file_that_cannot_be_opened_lets_the_tool_run_and_exit_as_it_would(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    stream = blocker / "progress.jsonl"  # no one, root included, opens a file under a file
    result = subprocess.run(
        [sys.executable, str(TOOL), "--progress-file", str(stream)], capture_output=True, timeout=120
    )
    assert result.returncode == 0 and b"Traceback" not in result.stderr
    output = result.stdout.decode().splitlines()
    assert set(TOOL_OUTPUT) <= set(output)  # the tool ran to its end
    said = [line for line in output if "its stream is incomplete" in line]  # the tool's logging has it
    assert len(said) == 1 and f"5 of 5 lines lost in {stream}" in said[0] and "succeeded (exit code 0)" in said[0]


def test_a_reader_follows_the_tool_live_through_its_stdout() -> None:
    process = subprocess.Popen(
        [sys.executable, str(TOOL), "--progress", "json"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    reader = StreamReader()
    for chunk in read_process(process):
        reader.feed(chunk)
    assert process.wait(timeout=120) == 0
    assert reader.diagnostics == [] and reader.latest_run() is not None and reader.latest_run().status == "succeeded"


def test_run_from_arguments_needs_the_flags() -> None:
    import argparse

    from trainwire import progress_arguments, run_from_arguments

    with pytest.raises(ValueError, match="progress_arguments"):
        run_from_arguments(argparse.Namespace())
    with pytest.raises(ValueError, match="default must be"):
        progress_arguments(argparse.ArgumentParser(), default="xml")
    parser = argparse.ArgumentParser()
    progress_arguments(parser)
    assert parser.parse_args([]).progress == "plain"
    assert vars(parser.parse_args(["--progress-file", "p.jsonl"])) == {"progress": "plain", "progress_file": "p.jsonl"}
