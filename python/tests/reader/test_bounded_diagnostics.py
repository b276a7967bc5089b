"""Diagnostics are bounded: the first ones are listed, the rest counted in
`diagnostics_dropped`, with the same numbers in Python and TypeScript, across a resume too."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
from support.paths import ROOT
from support.typescript_side import typescript_lines

from trainwire.contract import canonical
from trainwire.reader.state import StreamReader

STATE_SCHEMA = json.loads((ROOT / "schemas" / "bundled" / "reader-state-v1.schema.json").read_text(encoding="utf-8"))
GOOD = b'{"schema_version":1,"seq":1,"ts":"2026-11-29T10:00:00Z","run_id":"r1","event":"run.heartbeat"}\n'


def test_a_flood_of_bad_lines_keeps_the_first_diagnostics_and_counts_the_rest() -> None:
    reader = StreamReader()
    reader.feed(GOOD + b"not json\n" * 20_000 + GOOD)
    state = reader.to_dict()
    assert len(state["diagnostics"]) == 1000
    assert state["diagnostics"][0]["line"] == 2 and state["diagnostics"][-1]["line"] == 1001
    # the repeated seq 1 is a seq_not_increasing diagnostic: counted too
    assert state["diagnostics_dropped"] == 20_000 - 1000 + 1
    jsonschema.Draft202012Validator(STATE_SCHEMA).validate(state)


def test_a_state_within_the_limit_has_no_dropped_count() -> None:
    reader = StreamReader()
    reader.feed(GOOD + b"not json\n")
    assert "diagnostics_dropped" not in reader.to_dict()


def test_python_and_typescript_bound_diagnostics_alike_also_across_a_resume(tmp_path: Path) -> None:
    stream = tmp_path / "bad.ndjson"
    data = GOOD + b"{bad\n" * 40 + b"[]\n" * 30 + GOOD
    stream.write_bytes(data)
    middle = data.index(b"[]\n")
    request = [
        {"path": str(stream), "max_diagnostics": 25},
        {"path": str(stream), "max_diagnostics": 25, "resume_at": middle},
        {"path": str(stream), "max_diagnostics": 60, "resume_at": middle},
    ]
    typescript = typescript_lines("canonical-states.js", request)
    assert len(typescript) == len(request)
    for case, ts_state in zip(request, typescript, strict=False):
        reader = StreamReader(max_diagnostics=case["max_diagnostics"])
        at = case.get("resume_at")
        if at is not None:
            reader.feed(data[:at])
            reader = StreamReader(
                max_diagnostics=case["max_diagnostics"], resume=json.loads(json.dumps(reader.to_dict()))
            )
            reader.feed(data[at:])
        else:
            reader.feed(data)
        state = reader.to_dict()
        assert len(state["diagnostics"]) == case["max_diagnostics"]
        assert state["diagnostics_dropped"] == 71 - case["max_diagnostics"]
        for diagnostic in state["diagnostics"]:
            diagnostic["message"] = ""
        assert canonical.dumps(state) == ts_state, case


def test_tail_lists_the_first_diagnostics_and_says_how_many_more_there_were(tmp_path: Path) -> None:
    path = tmp_path / "progress.jsonl"
    path.write_bytes(GOOD + b"not json\n" * 1005)
    result = subprocess.run(
        [sys.executable, "-m", "trainwire", "tail", str(path)], capture_output=True, text=True, timeout=60, cwd=ROOT,
    )  # fmt: skip
    problems = result.stderr.splitlines()
    assert sum(1 for line in problems if ": invalid_json: " in line) == 1000
    assert f"{path}: 5 more bad lines (only the first 1000 are listed)" in problems
