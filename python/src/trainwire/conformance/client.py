"""Talking to a harness: one subprocess speaking NDJSON on stdin/stdout.

Every message is validated against the harness protocol schema. A harness that dies,
answers with something that is not JSON, or stays silent past the timeout is
*broken*: the client says so (`HarnessBroken`) and the runner restarts it.
"""

from __future__ import annotations

import json
import logging
import queue
import subprocess
import threading
from collections import deque
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import IO, Any

from trainwire.reader.decoder import parse_strict

logger = logging.getLogger("trainwire.conformance")

PROTOCOL_VERSION = 1
DEFAULT_TIMEOUT_S = 30.0
#: the least time a harness gets to start (an interpreter and its imports), whatever the answer timeout
START_TIMEOUT_S = 30.0
_EOF = object()


class HarnessBroken(Exception):
    """The harness crashed, spoke garbage or timed out; it must be restarted."""


class ProtocolViolation(Exception):
    """A well-formed message that the protocol schema rejects."""


@cache
def _protocol_validator(definition: str) -> Any:
    # Our own cache: `validator_for`'s is small and shared with line validation. Imported
    # here so that `trainwire conformance --help` works without the [conformance] extra.
    from trainwire.conformance.schema_check import validator_for

    return validator_for("harness-v1", definition)


def protocol_errors(message: Any, definition: str) -> list[str]:
    """Why `message` is not a valid `definition` of the harness protocol (empty if it is)."""
    validator = _protocol_validator(definition)
    return [f"/{'/'.join(map(str, error.absolute_path))}: {error.message}" for error in validator.iter_errors(message)]


def _pump(stream: IO[bytes], lines: queue.Queue[Any]) -> None:
    # A thread per harness: the only portable way to read a pipe with a timeout.
    for line in iter(stream.readline, b""):
        lines.put(line)
    lines.put(_EOF)


def _drain(stream: IO[bytes], tail: deque[str]) -> None:
    # Keeps the last lines of stderr for the report; never lets the pipe fill up.
    for line in iter(stream.readline, b""):
        tail.append(line.decode("utf-8", "replace").rstrip())


class Harness:
    """A running harness process."""

    def __init__(self, argv: Sequence[str], *, cwd: Path | None = None, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.argv = list(argv)
        self.cwd = cwd
        self.timeout_s = timeout_s
        self.hello: dict[str, Any] = {}
        self._process: subprocess.Popen[bytes] | None = None
        self._lines: queue.Queue[Any] = queue.Queue()
        self._next_seq = 0
        self.stderr_tail: deque[str] = deque(maxlen=20)
        self._stderr_thread: threading.Thread | None = None

    @property
    def roles(self) -> list[str]:
        return list(self.hello.get("roles", []))

    @property
    def implementation(self) -> dict[str, Any]:
        return dict(self.hello.get("implementation", {}))

    def start(self) -> dict[str, Any]:
        """Starts the process and exchanges `start`; returns the harness's introduction."""
        try:
            self._process = subprocess.Popen(
                self.argv, cwd=self.cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
        except OSError as error:
            raise HarnessBroken(f"cannot start {self.argv!r}: {error}") from error
        self._lines = queue.Queue()
        assert self._process.stdout is not None and self._process.stderr is not None
        self.stderr_tail = deque(maxlen=20)
        threading.Thread(target=_pump, args=(self._process.stdout, self._lines), daemon=True).start()
        self._stderr_thread = threading.Thread(
            target=_drain, args=(self._process.stderr, self.stderr_tail), daemon=True
        )
        self._stderr_thread.start()
        hello = self._exchange(
            {"cmd": "start", "version": PROTOCOL_VERSION}, "StartRequest", max(self.timeout_s, START_TIMEOUT_S)
        )
        problems = protocol_errors(hello, "StartResponse")
        if problems:
            raise HarnessBroken(f"bad answer to start: {'; '.join(problems)}")
        self.hello = hello
        return hello

    def request(self, cmd: str, **fields: Any) -> dict[str, Any]:
        """Sends a `read` or `write` request; returns the response (validated, seq checked)."""
        self._next_seq += 1
        seq = self._next_seq
        response = self._exchange({"cmd": cmd, "seq": seq, **fields}, f"{cmd.capitalize()}Request")
        if not isinstance(response, dict) or response.get("seq") != seq:
            got = response.get("seq") if isinstance(response, dict) else response
            raise HarnessBroken(f"answer out of step: expected seq {seq}, got {got!r}")
        for definition in ("SkippedResponse", "ErroredResponse"):
            if definition.removesuffix("Response").lower() in response:
                self._check(response, definition)
                return response
        self._check(response, f"{cmd.capitalize()}Response")
        return response

    def stop(self) -> None:
        """Asks the harness to exit, then makes sure it did."""
        process, self._process = self._process, None
        if process is None:
            return
        try:
            if process.poll() is None and process.stdin is not None:
                process.stdin.write(b'{"cmd":"stop"}\n')
                process.stdin.flush()
                process.stdin.close()
            process.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            process.kill()
            process.wait()

    def restart(self) -> dict[str, Any]:
        self.kill()
        return self.start()

    def kill(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.kill()
        if process is not None:
            process.wait()

    def _check(self, message: Any, definition: str) -> None:
        problems = protocol_errors(message, definition)
        if problems:
            raise ProtocolViolation(f"not a valid {definition}: {'; '.join(problems[:3])}")

    def _exchange(self, message: dict[str, Any], definition: str, timeout_s: float | None = None) -> Any:
        problems = protocol_errors(message, definition)
        assert not problems, f"the runner built an invalid {definition}: {problems}"
        process = self._process
        if process is None or process.stdin is None:
            raise HarnessBroken("the harness is not running")
        try:
            process.stdin.write(json.dumps(message, separators=(",", ":")).encode("utf-8") + b"\n")
            process.stdin.flush()
        except OSError as error:
            raise HarnessBroken(f"exit code {process.poll()}: cannot write to the harness: {error}") from error
        try:
            line = self._lines.get(timeout=timeout_s or self.timeout_s)
        except queue.Empty:
            raise HarnessBroken(f"timeout: no answer within {timeout_s or self.timeout_s:g} s") from None
        if line is _EOF:
            raise HarnessBroken(f"exit code {process.wait()}: the harness exited without answering")
        try:
            return parse_strict(line.decode("utf-8"))  # `NaN` or `Infinity` is not JSON either
        except ValueError:
            raise HarnessBroken(f"non-JSON output: {line[:80]!r}") from None

    def stderr_excerpt(self, lines: int = 5) -> str:
        """The last lines the harness wrote to stderr, for a report ("" when none)."""
        if self._stderr_thread is not None and (self._process is None or self._process.poll() is not None):
            self._stderr_thread.join(timeout=5)  # the process is gone: its stderr ends soon
        tail = list(self.stderr_tail)[-lines:]
        return "stderr ends:\n" + "\n".join(f"  | {line[:200]}" for line in tail) if tail else ""

    def __enter__(self) -> Harness:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
