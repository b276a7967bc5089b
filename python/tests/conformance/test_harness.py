"""The Python harness over a real pipe: the protocol of schemas/harness/v1."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from typing import Any

import jsonschema
from support.paths import ROOT

from trainwire.conformance.paths import cases_dir
from trainwire.contract import canonical
from trainwire.reader.state import read_state

MESSAGE = jsonschema.Draft202012Validator(
    json.loads((ROOT / "schemas" / "bundled" / "harness-v1.schema.json").read_text())
)


class Harness:
    def __init__(self) -> None:
        listing = json.loads((ROOT / "conformance" / "harnesses.json").read_text())
        (python,) = [h for h in listing["harnesses"] if h["name"] == "python"]
        argv = [sys.executable, *python["argv"][1:]]  # the listed argv, with this interpreter
        self.process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT
        )

    def send(self, request: Any) -> None:
        assert self.process.stdin is not None
        raw = request if isinstance(request, bytes) else json.dumps(request).encode()
        self.process.stdin.write(raw + b"\n")
        self.process.stdin.flush()

    def ask(self, request: Any) -> dict[str, Any]:
        self.send(request)
        assert self.process.stdout is not None
        answer = self.process.stdout.readline()
        assert answer.endswith(b"\n")
        response = json.loads(answer)
        MESSAGE.validate(response)
        return response


def test_a_session_over_a_real_pipe() -> None:
    harness = Harness()
    try:
        start = harness.ask({"cmd": "start", "version": 1})
        assert start["version"] == 1 and start["roles"] == ["reader", "writer"]
        assert start["implementation"]["language"] == "python"

        stream = (cases_dir() / "oom-restart" / "stream.ndjson").read_bytes()
        chunks = [stream[i : i + 7] for i in range(0, len(stream), 7)]  # split inside lines and characters
        read = harness.ask(
            {"cmd": "read", "seq": {"case": "oom"}, "chunks": [base64.b64encode(c).decode() for c in chunks]}
        )
        assert read["seq"] == {"case": "oom"}
        assert canonical.dumps(read["state"]) == canonical.dumps(read_state(stream))

        torn = stream[: stream.rindex(b"run.finished")]
        live = harness.ask(
            {
                "cmd": "read",
                "seq": 2,
                "chunks": [base64.b64encode(torn).decode()],
                "now": "2099-01-01T00:00:00Z",
                "stale_after_s": 60,
            }
        )
        assert live["state"]["runs"][0]["status"] == "stale" and live["state"]["partial_tail_bytes"] > 0

        scenario = json.loads((cases_dir() / "minimal-run" / "scenario.json").read_text())
        written = harness.ask({"cmd": "write", "seq": 3, "scenario": scenario})
        lines = base64.b64decode(written["stream"]).decode().splitlines()
        assert json.loads(lines[0])["event"] == "run.started" and json.loads(lines[-1])["event"] == "run.finished"

        unknown = harness.ask({"cmd": "dance", "seq": 4})
        assert unknown["errored"] is True and unknown["seq"] == 4 and "dance" in unknown["context"]["message"]
        broken = harness.ask({"cmd": "read", "seq": 5, "chunks": ["not base64!"]})
        assert broken["errored"] is True and "Traceback" in broken["context"]["traceback"]
        garbage = harness.ask(b"{not json")
        assert garbage == {**garbage, "seq": None, "errored": True}

        harness.send({"cmd": "stop"})
        assert harness.process.wait(timeout=30) == 0
        assert harness.process.stdout is not None and harness.process.stdout.read() == b""  # nothing else on stdout
    finally:
        if harness.process.poll() is None:
            harness.process.kill()
            harness.process.wait()
