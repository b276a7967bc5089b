"""examples/plain_loop.py: a plain PyTorch loop, alone and under torchrun (2 CPU ranks, gloo)."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from support.paths import ROOT
from support.stopping import cli_stop
from support.stream_files import free_port, stream_of

from trainwire.reader.invariants import check_stream

EXAMPLE = ROOT / "examples" / "plain_loop.py"
TIMEOUT_S = 180  # a hang fails the test instead of blocking the suite


def stop_when_training(process: subprocess.Popen[str], output_dir: Path) -> tuple[str, str]:
    """Waits for step 3 on the stream, asks for a stop with `trainwire stop`, returns the process's output."""
    stream_path = output_dir / "progress.jsonl"
    try:
        deadline = time.monotonic() + TIMEOUT_S
        while not any(line["event"] == "train.step" and line["step"] >= 3 for line in stream_of(stream_path)):
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "training did not start"
            time.sleep(0.05)
        asked = cli_stop(output_dir, "--reason", "enough")  # `trainwire stop`, as a user types it
        assert asked.returncode == 0, asked.stdout + asked.stderr
        return process.communicate(timeout=TIMEOUT_S)
    finally:
        process.kill()
        process.wait()


def assert_interrupted_with_one_checkpoint(output_dir: Path, step: int) -> list[dict[str, Any]]:
    stream = stream_of(output_dir / "progress.jsonl")
    assert check_stream((output_dir / "progress.jsonl").read_bytes()) == []
    assert len({line["run_id"] for line in stream}) == 1
    stops = [(line["source"], line["reason"]) for line in stream if line["event"] == "stop.requested"]
    assert stops == [("control_file", "enough")]
    saved = [(line["step"], line["path"], line["reason"]) for line in stream if line["event"] == "checkpoint.saved"]
    assert saved == [(step, f"checkpoint-{step}.pt", "stop")]
    assert sorted(path.name for path in output_dir.glob("checkpoint-*")) == [f"checkpoint-{step}.pt"]  # rank 0's only
    phases = [(line["phase"], line["status"]) for line in stream if line["event"] == "phase.ended"]
    assert phases == [("train", "interrupted")]
    finished = stream[-1]
    assert (finished["event"], finished["status"], finished["reason"], finished["step"], finished["exit_code"]) == (
        "run.finished",
        "interrupted",
        "control_file",
        step,
        2,
    )
    assert finished["checkpoint"] == f"checkpoint-{step}.pt"  # the one to resume from
    return stream


def test_the_loop_runs_to_the_end(tmp_path: Path) -> None:
    command = [sys.executable, str(EXAMPLE), str(tmp_path), "--steps", "12", "--eval-every", "5"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert result.returncode == 0, result.stderr[-4000:]
    assert result.stdout == "rank 0 ended succeeded at step 12\n"
    stream = stream_of(tmp_path / "progress.jsonl")
    assert check_stream((tmp_path / "progress.jsonl").read_bytes()) == []
    assert [line["step"] for line in stream if line["event"] == "train.step"] == list(range(1, 13))
    assert [line["step"] for line in stream if line["event"] == "eval.completed"] == [5, 10]
    saved = [(line["step"], line["reason"]) for line in stream if line["event"] == "checkpoint.saved"]
    assert saved == [(12, "final")]
    assert (stream[0]["total_steps"], stream[0]["config"]["steps"]) == (12, 12)
    assert (stream[-1]["status"], stream[-1]["step"]) == ("succeeded", 12)


def test_a_stop_ends_the_loop_interrupted_with_exit_code_2(tmp_path: Path) -> None:
    command = [sys.executable, str(EXAMPLE), str(tmp_path), "--steps", "100000", "--step-delay", "0.01"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stdout, stderr = stop_when_training(process, tmp_path)
    assert process.returncode == 2, stderr[-4000:]
    step = int(re.fullmatch(r"rank 0 ended interrupted at step (\d+)\n", stdout).group(1))  # type: ignore[union-attr]
    assert_interrupted_with_one_checkpoint(tmp_path, step)


def test_under_torchrun_every_rank_stops_at_the_same_step_and_only_rank_0_writes(tmp_path: Path) -> None:
    command = [
        sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--master-addr", "127.0.0.1",
        "--master-port", str(free_port()), str(EXAMPLE), str(tmp_path), "--steps", "100000", "--step-delay", "0.01",
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stdout, stderr = stop_when_training(process, tmp_path)
    ended = dict(re.findall(r"^rank (\d) ended interrupted at step (\d+)$", stdout, flags=re.M))
    assert sorted(ended) == ["0", "1"], (stdout, stderr[-4000:])
    assert ended["0"] == ended["1"]  # the same step on every rank
    stream = assert_interrupted_with_one_checkpoint(tmp_path, int(ended["0"]))
    assert stream[0]["world_size"] == 2
    assert [line["event"] for line in stream].count("run.started") == 1
    assert list(tmp_path.glob("*.jsonl")) == [tmp_path / "progress.jsonl"]
    # torchrun reports a worker's non-zero exit as its own failure
    assert process.returncode == 1
