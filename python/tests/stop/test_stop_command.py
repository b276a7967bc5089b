"""`trainwire stop` reports what happened: the run's acknowledgement with its step, or a
request that stays pending, why, and its own exit code; TypeScript's `requestStopAndWait`
says the same; `run.started.stop_channels` declares what a run listens to."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from support.stopping import cli_stop, readme_example, stopped_at_step, typescript_stop
from support.stream_files import stream_of

from trainwire import Run
from trainwire._generated.contract import STOP_PENDING_EXIT_CODE
from trainwire.stop import STOP_FILE


@pytest.mark.slow
@pytest.mark.parametrize("side", ["cli", "node"])
def test_the_cli_and_typescript_report_the_acknowledgement_with_the_step(tmp_path: Path, side: str) -> None:
    script, stream = readme_example(tmp_path), tmp_path / "out" / "progress.jsonl"
    said: list[subprocess.CompletedProcess[str]] = []

    def stop(_: object) -> None:
        said.append(cli_stop(tmp_path / "out") if side == "cli" else typescript_stop(tmp_path / "out", wait_s=30))

    ended = stopped_at_step([sys.executable, str(script)], stream, stop, cwd=tmp_path)
    assert ended.returncode == 2
    lines = stream_of(stream)
    steps = [line["step"] for line in lines if line["event"] == "train.step"]
    run_id = lines[0]["run_id"]
    if side == "cli":
        assert said[0].returncode == 0, said[0].stdout
        assert said[0].stdout.startswith(f"stop acknowledged by run {run_id} at step {steps[-1]}: it ends interrupted")
    else:
        outcome = json.loads(said[0].stdout)
        assert (outcome["acknowledged"], outcome["runId"], outcome["step"]) == (True, run_id, steps[-1])
    assert [line["event"] for line in lines].count("stop.requested") == 1


def test_a_request_nobody_acknowledges_stays_pending_says_why_and_exits_with_its_own_code(tmp_path: Path) -> None:
    said = cli_stop(tmp_path, "--timeout", "0.2")
    assert said.returncode == STOP_PENDING_EXIT_CODE == 6
    assert "stop not acknowledged within 0.2s: the request stays pending" in said.stdout
    assert "no run has started there yet" in said.stdout
    assert (tmp_path / STOP_FILE).exists()

    with Run(tmp_path, stop=False) as run:  # a run that listens to nothing, still running
        run.start(provenance=False)
        said = cli_stop(tmp_path, "--timeout", "0.2")
        assert said.returncode == 6
        assert "did not declare what it listens to" in said.stdout, said.stdout
    said = cli_stop(tmp_path, "--timeout", "0.2")
    assert f"the latest run there ({run.run_id}) already finished (succeeded): no live run" in said.stdout

    outcome = json.loads(typescript_stop(tmp_path, wait_s=0.2).stdout)
    assert (outcome["acknowledged"], outcome["why"]) == (
        False,
        f"the latest run there ({run.run_id}) already finished (succeeded): no live run",
    )


def test_no_wait_says_it_did_not_wait(tmp_path: Path) -> None:
    said = cli_stop(tmp_path, "--no-wait")
    assert said.returncode == 0
    assert (
        said.stdout
        == f"stop request written to {tmp_path / STOP_FILE}; not waiting for a run to acknowledge it (--no-wait)\n"
    )


def test_run_started_declares_what_the_run_listens_to(tmp_path: Path) -> None:
    def channels(directory: Path, **options: object) -> list[str] | None:
        directory.mkdir()
        with Run(directory, **options) as run:  # type: ignore[arg-type]
            run.start(provenance=False)
        return stream_of(directory / "progress.jsonl")[0].get("stop_channels")

    assert channels(tmp_path / "block") == ["control_file", "sigint", "sigterm", "api"]
    assert channels(tmp_path / "off", stop=False) is None
    found: list[list[str] | None] = []
    thread = threading.Thread(target=lambda: found.append(channels(tmp_path / "thread")))
    thread.start()
    thread.join(30)
    assert found == [["control_file", "api"]]  # no handler outside the main thread
