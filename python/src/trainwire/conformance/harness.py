"""The Python harness of the conformance suite (`python -m trainwire.conformance.harness`).

Speaks the harness protocol (schemas/harness/v1) on stdin/stdout, one JSON object per
line: `start`, `read` (reader role), `write` (writer role), `stop`. Nothing else is ever
written to stdout; logs go to stderr.
"""

from __future__ import annotations

import base64
import json
import sys
import traceback
from typing import Any, TextIO

from trainwire._version import __version__
from trainwire.contract import canonical
from trainwire.reader.state import StreamReader

__all__ = ["PROTOCOL_VERSION", "handle", "main", "serve"]

PROTOCOL_VERSION = 1
IMPLEMENTATION = {
    "name": "trainwire",
    "language": "python",
    "version": __version__,
    "homepage": "https://trainwire.dev",
}


class _Stop(Exception):
    """The runner said `stop`."""


def handle(request: Any) -> dict[str, Any]:
    """The response to one request (raises `_Stop` for `stop`)."""
    if not isinstance(request, dict):
        raise ValueError(f"a request is a JSON object, not {type(request).__name__}")
    command = request.get("cmd")
    if command == "start":
        if request.get("version") != PROTOCOL_VERSION:
            raise ValueError(f"protocol version {request.get('version')!r} is not supported (only {PROTOCOL_VERSION})")
        return {"version": PROTOCOL_VERSION, "implementation": IMPLEMENTATION, "roles": ["reader", "writer"]}
    if command == "read":
        return {"seq": request.get("seq"), "state": _read(request)}
    if command == "write":
        return {"seq": request.get("seq"), "stream": _write(request["scenario"])}
    if command == "stop":
        raise _Stop
    raise ValueError(f"unknown command {command!r}")


def _read(request: dict[str, Any]) -> dict[str, Any]:
    reader = StreamReader()
    for chunk in request["chunks"]:
        reader.feed(base64.b64decode(chunk, validate=True))
    reader.finish()
    return reader.to_dict(now=request.get("now"), stale_after_s=request.get("stale_after_s"))


def _write(scenario: dict[str, Any]) -> str:
    from trainwire.conformance.scenario import play  # the writer role needs the emitter; reading does not

    return base64.b64encode(play(scenario)).decode("ascii")


def serve(stdin: TextIO, stdout: TextIO) -> None:
    """Answer requests, one line each, until `stop` or the end of input."""
    for line in stdin:
        if not line.strip():
            continue
        request: Any = None
        try:
            request = json.loads(line)
            response = handle(request)
        except _Stop:
            return
        except Exception as error:  # every failure is reported to the runner, never fatal
            seq = request.get("seq") if isinstance(request, dict) else None
            context = {"message": f"{type(error).__name__}: {error}", "traceback": traceback.format_exc()}
            response = {"seq": seq, "errored": True, "context": context}
        stdout.write(canonical.dumps(response) + "\n")
        stdout.flush()


def main() -> int:
    # Bytes on the wire are UTF-8 whatever the locale; newline translation is off.
    stdin = open(sys.stdin.fileno(), encoding="utf-8", newline="\n", closefd=False)  # noqa: SIM115
    stdout = open(sys.stdout.fileno(), "w", encoding="utf-8", newline="\n", closefd=False)  # noqa: SIM115
    sys.stdout = sys.stderr  # a stray print() must not corrupt the protocol
    serve(stdin, stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
