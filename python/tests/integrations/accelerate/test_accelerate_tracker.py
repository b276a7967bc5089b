"""The Accelerate tracker under `accelerate launch` with 2 CPU processes (gloo)."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.example_scripts import EXAMPLES
from support.stopped_processes import TIMEOUT_S, stopped_after_step
from support.stream_files import free_port, stream_of

from trainwire.reader.invariants import check_stream
from trainwire.stop import request_stop

EXAMPLE = EXAMPLES / "accelerate_train.py"


def launch(output_dir: Path, *options: str) -> list[str]:
    return [
        sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2",
        "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no",
        "--main_process_port", str(free_port()), str(EXAMPLE), str(output_dir), *options,
    ]  # fmt: skip


def test_one_process_reports_steps_evaluations_and_the_config(tmp_path: Path) -> None:
    command = [sys.executable, str(EXAMPLE), str(tmp_path), "--steps", "12", "--eval-every", "5"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert result.returncode == 0, result.stderr[-4000:]
    stream = stream_of(tmp_path / "progress.jsonl")
    assert check_stream((tmp_path / "progress.jsonl").read_bytes()) == []
    assert (stream[0]["config"]["steps"], stream[0]["total_steps"], stream[0]["world_size"]) == (12, 12, 1)
    steps = [line for line in stream if line["event"] == "train.step"]
    assert [line["step"] for line in steps] == list(range(1, 13))
    assert all(line["loss"] > 0 and line["learning_rate"] == 0.05 for line in steps)
    for step in steps:  # no accelerator here: the process's peak resident memory
        assert set(step["memory"]) == {"cpu"} and step["memory"]["cpu"]["peak_bytes"] > 10_000_000
    evals = [
        (line["step"], line["split"], list(line["metrics"])) for line in stream if line["event"] == "eval.completed"
    ]
    assert evals == [(5, "eval", ["loss"]), (10, "eval", ["loss"])]
    assert (stream[-1]["event"], stream[-1]["status"], stream[-1]["step"]) == ("run.finished", "succeeded", 12)


def stop_by_file(output_dir: Path) -> Any:
    return lambda process: request_stop(output_dir, reason="enough")


def stop_by_sigterm(output_dir: Path) -> Any:
    return lambda process: process.send_signal(signal.SIGTERM)  # accelerate launch passes it on


@pytest.mark.parametrize(("stop", "reason"), [(stop_by_file, "control_file"), (stop_by_sigterm, "sigterm")])
def test_under_accelerate_launch_both_ranks_stop_at_one_step_with_a_checkpoint(
    tmp_path: Path, stop: Any, reason: str
) -> None:
    command = launch(tmp_path, "--steps", "100000", "--step-delay", "0.02")
    ended = stopped_after_step(command, tmp_path / "progress.jsonl", 3, stop(tmp_path))
    stopped = dict(re.findall(r"^rank (\d) ended interrupted at step (\d+)$", ended.stdout, flags=re.M))
    assert sorted(stopped) == ["0", "1"], (ended.stdout, ended.stderr[-4000:])
    assert stopped["0"] == stopped["1"]  # the same step on every rank
    step = int(stopped["0"])
    stream = stream_of(tmp_path / "progress.jsonl")
    assert check_stream((tmp_path / "progress.jsonl").read_bytes()) == []
    assert list(tmp_path.glob("*.jsonl")) == [tmp_path / "progress.jsonl"]  # the main process only
    assert stream[0]["world_size"] == 2 and len({line["run_id"] for line in stream}) == 1
    saved = [(line["step"], line["path"], line["reason"]) for line in stream if line["event"] == "checkpoint.saved"]
    assert saved == [(step, f"checkpoints/stop-step={step}", "stop")]
    assert (tmp_path / saved[0][1]).is_dir()
    finished = stream[-1]
    assert (finished["status"], finished["reason"], finished["step"], finished["exit_code"]) == (
        "interrupted",
        reason,
        step,
        2,
    )
    assert finished["checkpoint"] == f"checkpoints/stop-step={step}"


def test_one_process_stops_on_sigterm_with_a_checkpoint_and_exit_2(tmp_path: Path) -> None:
    command = [sys.executable, str(EXAMPLE), str(tmp_path), "--steps", "100000", "--step-delay", "0.02"]
    ended = stopped_after_step(command, tmp_path / "progress.jsonl", 3, stop_by_sigterm(tmp_path))
    assert ended.returncode == 2, ended.stderr[-4000:]
    stream = stream_of(tmp_path / "progress.jsonl")
    assert check_stream((tmp_path / "progress.jsonl").read_bytes()) == []
    saved = [line for line in stream if line["event"] == "checkpoint.saved"]
    assert len(saved) == 1 and saved[0]["reason"] == "stop"
    assert (stream[-1]["status"], stream[-1]["reason"], stream[-1]["checkpoint"]) == (
        "interrupted",
        "sigterm",
        saved[0]["path"],
    )


def test_init_trackers_names_the_run_after_its_project_with_the_tags_of_its_init_kwargs(tmp_path: Path) -> None:
    command = [sys.executable, str(EXAMPLE), str(tmp_path), "--steps", "2"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert result.returncode == 0, result.stderr[-4000:]
    started = stream_of(tmp_path / "progress.jsonl")[0]
    assert (started["name"], started["tags"]) == ("accelerate-example", ["example"])
