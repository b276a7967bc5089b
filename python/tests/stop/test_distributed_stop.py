"""A stop in a 2-rank CPU DDP run (gloo): one stream, both ranks stop at the same step, no hang."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from support.paths import SCRIPTS
from support.stream_files import free_port, stream_of

from trainwire.integrations.distributed import all_ranks_agree, all_ranks_max
from trainwire.stop import request_stop

SCRIPT = SCRIPTS / "ddp_rank.py"
TIMEOUT_S = 180  # a hang fails the test instead of blocking the suite


def start_ranks(output_dir: Path, max_steps: int) -> list[subprocess.Popen[str]]:
    port = free_port()
    ranks = []
    for rank in range(2):
        env = {
            **os.environ,
            "RANK": str(rank),
            "LOCAL_RANK": str(rank),
            "WORLD_SIZE": "2",
            "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": str(port),
        }
        command = [sys.executable, str(SCRIPT), str(output_dir), str(max_steps)]
        ranks.append(subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    return ranks


def wait_all(ranks: list[subprocess.Popen[str]]) -> list[tuple[int, dict[str, Any]]]:
    results = []
    try:
        for process in ranks:
            stdout, stderr = process.communicate(timeout=TIMEOUT_S)
            sys.stderr.write(stderr[-4000:])  # shown by pytest when the test fails
            report = json.loads(stdout.strip().splitlines()[-1]) if stdout.strip() else {}
            results.append((process.returncode, report))
    finally:
        for process in ranks:
            process.kill()
            process.wait()
    return results


def test_without_a_process_group_the_flag_is_local() -> None:
    assert all_ranks_agree(True) is True and all_ranks_agree(False) is False
    assert all_ranks_max(3) == 3


def test_a_stop_file_stops_both_ranks_at_the_same_step(tmp_path: Path) -> None:
    stream_path = tmp_path / "progress.jsonl"
    ranks = start_ranks(tmp_path, max_steps=100_000)
    try:
        deadline = time.monotonic() + TIMEOUT_S
        while not any(line["event"] == "train.step" and line["step"] >= 3 for line in stream_of(stream_path)):
            assert all(process.poll() is None for process in ranks), "a rank ended before the stop"
            assert time.monotonic() < deadline, "training did not start"
            time.sleep(0.05)
        request_stop(tmp_path, reason="distributed test")
    finally:
        results = wait_all(ranks)  # kills what is left after the timeout
    assert [code for code, _ in results] == [2, 2]
    reports = [report for _, report in results]
    assert [report["rank"] for report in reports] == [0, 1]
    assert reports[0]["stopped"] and reports[1]["stopped"]
    step = reports[0]["global_step"]
    assert reports[1]["global_step"] == step  # the same step on every rank

    stream = stream_of(stream_path)
    assert len({line["run_id"] for line in stream}) == 1  # one stream: rank 0 only
    assert [line["event"] for line in stream].count("run.started") == 1
    assert stream[0]["world_size"] == 2
    stops = [line for line in stream if line["event"] == "stop.requested"]
    assert [(line["source"], line["reason"]) for line in stops] == [("control_file", "distributed test")]
    saved = [line for line in stream if line["event"] == "checkpoint.saved"]
    assert [(line["step"], line["reason"]) for line in saved] == [(step, "stop")]
    assert (tmp_path / f"checkpoint-{step}").is_dir()
    assert stream[-1]["event"] == "run.finished"
    assert (stream[-1]["status"], stream[-1]["reason"], stream[-1]["step"]) == ("interrupted", "control_file", step)
    assert list(tmp_path.glob("*.jsonl")) == [stream_path]
