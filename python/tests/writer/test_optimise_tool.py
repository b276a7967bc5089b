"""Command-line tools with `--progress json`: examples/optimise_tool.py read live by both
readers, and a Lightning tool whose standard output stays the stream's."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from support.example_scripts import EXAMPLES
from support.paths import SCRIPTS
from support.typescript_side import typescript_lines

from trainwire.contract.models import EVENT_ADAPTER
from trainwire.reader.sources import read_process
from trainwire.reader.state import StreamReader

TOOL = [sys.executable, str(EXAMPLES / "optimise_tool.py"), "--cycles", "2", "--trials", "3"]
VERDICT = re.compile(r"^cycle (\d) trial (\d+): .* (accepted|rejected)$", re.M)


def tool(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TOOL, *arguments], capture_output=True, text=True, timeout=120, check=True)


def test_json_moves_the_tools_own_output_to_stderr_byte_for_byte() -> None:
    plain, streamed = tool("--progress", "plain"), tool("--progress", "json")
    assert plain.stderr == "" and plain.stdout.startswith("baseline: ")
    assert streamed.stderr == plain.stdout  # the same lines, now beside the stream
    assert all(json.loads(line)["event"] for line in streamed.stdout.splitlines())


def test_read_process_sees_the_baseline_the_cycles_and_each_trials_decision() -> None:
    process = subprocess.Popen([*TOOL, "--progress", "json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    reader, received = StreamReader(), b""
    for chunk in read_process(process):
        reader.feed(chunk)
        received += chunk
    events = [json.loads(line) for line in received.splitlines()]
    printed = process.stderr.read().decode() if process.stderr else ""
    assert process.wait(timeout=120) == 0 and reader.diagnostics == []

    def of(name: str) -> list[dict[str, Any]]:
        return [event for event in events if event["event"] == name]

    assert [(event["trial"], event.get("baseline", False)) for event in of("trial.started")][:2] == [
        (1, True),
        (2, False),
    ]
    cycles = [(event["phase"], event["cycle"], event["total_cycles"]) for event in of("phase.started")]
    assert cycles == [("search", 1, 2), ("search", 2, 2)]
    decisions = {event["trial"]: event.get("accepted") for event in of("trial.ended")}
    said = {int(trial): verdict == "accepted" for _, trial, verdict in VERDICT.findall(printed)}
    assert said and {trial: decisions[trial] for trial in said} == said  # what people read, in the stream
    assert {True, False} <= set(said.values())
    run = reader.latest_run()
    assert run is not None and run.status == "succeeded" and run.trials["count"] == 7


def test_typescript_reads_the_tool_live_with_from_readable() -> None:
    answer, diagnostics = typescript_lines("read-tool.js", [*TOOL, "--progress", "json"])
    process = subprocess.Popen([*TOOL, "--progress", "json"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    reader = StreamReader()
    for chunk in read_process(process):
        reader.feed(chunk)
    process.wait(timeout=120)
    run = reader.latest_run()
    assert run is not None
    # two runs of the tool: the same trials, decisions and values; only their timings differ
    assert without_timings(json.loads(answer)) == {
        "code": 0,
        "status": run.status,
        "trials": without_timings(run.trials),
    }
    assert json.loads(diagnostics) == 0


def test_under_lightning_standard_output_stays_pure_ndjson(tmp_path: Path) -> None:
    command = [sys.executable, str(SCRIPTS / "lightning_progress_tool.py"), str(tmp_path)]
    plain = subprocess.run([*command, "--progress", "plain"], capture_output=True, text=True, timeout=180, check=True)
    assert "tool: done" in plain.stdout and "Epoch 0" in plain.stdout  # Lightning's bar writes to stdout
    streamed = subprocess.run([*command, "--progress", "json"], capture_output=True, text=True, timeout=180, check=True)
    events = [EVENT_ADAPTER.validate_json(line, strict=True).event for line in streamed.stdout.splitlines()]
    assert events[0] == "run.started" and events[-1] == "run.finished" and events.count("train.step") == 6
    for printed in ("tool: starting", "log: fit returned", "tool: done", "Epoch 0"):
        assert printed in streamed.stderr


def without_timings(value: Any) -> Any:
    """`value` without the seconds a run took (`duration_s`, `elapsed_s`, `eta_s`), at any depth."""
    if isinstance(value, dict):
        return {
            key: without_timings(item) for key, item in value.items() if key not in ("duration_s", "elapsed_s", "eta_s")
        }
    if isinstance(value, list):
        return [without_timings(item) for item in value]
    return value
