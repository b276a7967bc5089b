"""The harness loop the test harnesses here share: the real Python reader, plus one flaw."""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import Callable
from typing import Any

from trainwire.contract.canonical import dumps
from trainwire.reader.state import read_state

Reader = Callable[[bytes, dict[str, Any]], Any]
Writer = Callable[[dict[str, Any]], bytes]


def reference_read(data: bytes, request: dict[str, Any]) -> Any:
    return read_state(data, now=request.get("now"), stale_after_s=request.get("stale_after_s"))


def serve(name: str, read: Reader | None = None, write: Writer | None = None) -> None:
    """Answers `start`, `read`, `write` and `stop` on stdin/stdout with the given roles."""
    roles = [role for role, handler in (("reader", read), ("writer", write)) if handler is not None]
    for line in sys.stdin:
        request = json.loads(line)
        if request["cmd"] == "stop":
            return
        if request["cmd"] == "start":
            answer: dict[str, Any] = {
                "version": 1,
                "implementation": {"name": name, "language": "python", "version": "0"},
                "roles": roles,
            }
        elif request["cmd"] == "read" and read is not None:
            data = b"".join(base64.b64decode(chunk) for chunk in request["chunks"])
            answer = {"seq": request["seq"], "state": read(data, request)}
        elif request["cmd"] == "write" and write is not None:
            answer = {"seq": request["seq"], "stream": base64.b64encode(write(request["scenario"])).decode("ascii")}
        else:
            answer = {"seq": request["seq"], "skipped": True, "message": f"no {request['cmd']} role"}
        sys.stdout.write(dumps(answer) + "\n")  # canonical, as a harness answers: 1e400 kept is null
        sys.stdout.flush()
