"""`trainwire demo`: the tiny real training, and `demo run` end to end (train, follow, validate)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from trainwire.cli import demo
from trainwire.contract.models import EVENT_ADAPTER
from trainwire.stop import request_stop

TIMEOUT_S = 240


def events(path: Path) -> list[dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").split("\n")[:-1]
    for line in lines:
        EVENT_ADAPTER.validate_json(line, strict=True)
    return [json.loads(line) for line in lines]


def test_demo_train_runs_every_phase_and_saves_the_model(tmp_path: Path) -> None:
    code = demo.main(
        ["train", "--output-dir", str(tmp_path), "--steps", "12", "--eval-every", "6", "--save-every", "6",
         "--step-delay", "0"]
    )  # fmt: skip
    assert code == 0
    stream = events(tmp_path / "progress.jsonl")
    # each evaluation is an `eval` phase of its own inside `train`, counting its batches
    phases = [(line["event"], line["phase"]) for line in stream if line["event"] in ("phase.started", "phase.ended")]
    evaluations = [phase for phase in phases if phase[1] == "eval"]
    assert evaluations and evaluations == [("phase.started", "eval"), ("phase.ended", "eval")] * (len(evaluations) // 2)
    phases = [phase for phase in phases if phase[1] != "eval"]
    assert phases == [
        ("phase.started", "model_load"),
        ("phase.ended", "model_load"),
        ("phase.started", "data_prepare"),
        ("phase.ended", "data_prepare"),
        ("phase.started", "train"),
        ("phase.ended", "train"),
        ("phase.started", "save"),
        ("phase.ended", "save"),
    ]
    assert stream[0]["total_steps"] == 12
    assert [line["step"] for line in stream if line["event"] == "eval.completed"] == [6, 12]
    finished = stream[-1]
    assert (finished["status"], finished["exit_code"], finished["step"]) == ("succeeded", 0, 12)
    assert finished["artifacts"] == {"model": "model"} and finished["checkpoint"] == "checkpoint-12"
    assert finished["metrics"]["train_loss"] > 0
    assert (tmp_path / "model" / "model.safetensors").is_file()
    # The demo's handlers are gone once it returns.
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_demo_train_resume_without_a_checkpoint_starts_fresh(tmp_path: Path) -> None:
    assert demo.main(["train", "--output-dir", str(tmp_path), "--steps", "3", "--step-delay", "0", "--resume"]) == 0
    stream = events(tmp_path / "progress.jsonl")
    assert "resumed_from" not in stream[0] and stream[-1]["status"] == "succeeded"


def demo_run(output_dir: Path, *options: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "trainwire.cli.demo", "run", "--output-dir", str(output_dir), *options]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_demo_run_follows_the_stream_and_validates_it(tmp_path: Path) -> None:
    process = demo_run(tmp_path, "--steps", "8", "--step-delay", "0")
    stdout, stderr = process.communicate(timeout=TIMEOUT_S)
    assert process.returncode == 0, stderr[-3000:]
    stream = events(tmp_path / "progress.jsonl")
    assert stream[-1]["status"] == "succeeded"
    assert stream[0]["run_id"] in stdout + stderr  # the live view showed the run
    assert (tmp_path / "model").is_dir() and (tmp_path / "demo-train.log").is_file()


@pytest.mark.skipif(os.name != "posix", reason="POSIX signals")
def test_ctrl_c_on_demo_run_stops_the_training_cleanly(tmp_path: Path) -> None:
    process = demo_run(tmp_path, "--steps", "5000", "--step-delay", "0.05")
    stream_path = tmp_path / "progress.jsonl"
    try:
        deadline = time.monotonic() + TIMEOUT_S
        while not (stream_path.exists() and '"train.step"' in stream_path.read_text(encoding="utf-8")):
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)  # what Ctrl+C sends to the parent
        stdout, stderr = process.communicate(timeout=TIMEOUT_S)
    finally:
        # The training child has its own session: a failed test stops it by control file.
        if process.poll() is None:
            request_stop(tmp_path)
            try:
                process.wait(timeout=TIMEOUT_S)
            finally:
                process.kill()
                process.wait()
    assert process.returncode == 2, stderr[-3000:]  # interrupted, and the stream validated
    stream = events(stream_path)
    assert [line["signal"] for line in stream if line["event"] == "stop.requested"] == ["SIGINT"]
    assert (stream[-1]["status"], stream[-1]["reason"]) == ("interrupted", "sigint")
    assert not (tmp_path / "model").exists()


def test_demo_run_names_the_extra_before_it_starts(tmp_path: Path) -> None:
    # transformers made unimportable in the parent: the check runs before any child starts
    code = "import sys; sys.modules['transformers'] = None; from trainwire.cli.demo import main; sys.exit(main(sys.argv[1:]))"
    process = subprocess.run(
        [sys.executable, "-c", code, "run", "--output-dir", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert process.returncode == 1
    assert "pip install 'trainwire[transformers]'" in process.stderr and "Traceback" not in process.stderr
    assert not (tmp_path / "out" / "demo-train.log").exists()


def test_demo_run_shows_why_its_training_failed(tmp_path: Path) -> None:
    # a transformers package that cannot be imported: found by the check, fails in the child
    broken = tmp_path / "broken"
    (broken / "transformers").mkdir(parents=True)
    (broken / "transformers" / "__init__.py").write_text(
        "raise ImportError('this transformers is broken on purpose')\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(broken), *sys.path])}
    command = [sys.executable, "-m", "trainwire.cli.demo", "run", "--output-dir", str(tmp_path / "out"), "--steps", "2"]
    process = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S, env=env)
    assert process.returncode != 0
    assert "training failed (exit 1)" in process.stderr
    assert "this transformers is broken on purpose" in process.stderr  # the child's own message, shown
