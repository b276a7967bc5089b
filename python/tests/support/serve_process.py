"""A real `trainwire serve` process on loopback and the runs it serves, for the server tests."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from support.paths import ROOT
from trainwire import Run


class Server:
    def __init__(self, process: subprocess.Popen[str], url: str) -> None:
        self.process = process
        parts = urlsplit(url)
        self.base = f"{parts.scheme}://{parts.netloc}"
        self.netloc = parts.netloc
        self.token = parse_qs(parts.query)["token"][0]
        #: what the process printed besides its URL line, once it has ended
        self.output = ""

    def cpu_seconds(self) -> float:
        """The process's CPU time so far, user and system, from /proc."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def request(
        self,
        path: str,
        *,
        method: str = "GET",
        headers: dict[str, str] | None = None,
        body: Any = None,
        token: bool = True,
    ) -> tuple[int, dict[str, str], bytes]:
        """One request, with the server's token unless `token=False` (or `headers` has one)."""
        data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
        sent = {"X-Trainwire-Token": self.token} if token else {}
        request = urllib.request.Request(
            self.base + path, data=data, method=method, headers={**sent, **(headers or {})}
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, dict(response.headers), response.read()
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), error.read()

    def rows(self, query: str = "", *, timeout_s: float = 30.0) -> list[dict[str, Any]]:
        """The rows of `/api/runs?query` once the server has read every run it found (the
        answer no longer says `scanning`)."""
        return self.runs_page(query, timeout_s=timeout_s)["rows"]

    def runs_page(self, query: str = "", *, timeout_s: float = 30.0) -> dict[str, Any]:
        """The whole answer of `/api/runs?query` once the server has read every run it found."""
        deadline = time.monotonic() + timeout_s
        while True:
            status, _, body = self.request("/api/runs" + (f"?{query}" if query else ""))
            assert status == 200, body
            page: dict[str, Any] = json.loads(body)
            if not page["scanning"] or time.monotonic() > deadline:
                return page
            time.sleep(0.05)  # polling for a condition: the first pass over the runs


@contextmanager
def serve(*arguments: str, port: int = 0, open_files: int | None = None) -> Iterator[Server]:
    """`trainwire serve ARGUMENTS --port PORT` as a process (with `open_files`, under that
    open-file limit); after the block, `server.output` holds everything it wrote to stdout
    and stderr."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python" / "src")}

    def limit_open_files() -> None:
        if open_files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))

    process = subprocess.Popen(
        [sys.executable, "-m", "trainwire", "serve", *arguments, "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=limit_open_files,
    )
    server: Server | None = None
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # the server prints its URL before it listens for requests
        if not line.startswith("trainwire serve: http://"):
            process.wait(timeout=30)
            raise AssertionError(f"serve printed {line!r}; stderr: {process.stderr.read() if process.stderr else ''}")
        server = Server(process, line.split()[2])
        yield server
    finally:
        process.terminate()
        try:
            stdout, stderr = process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            raise AssertionError("the server did not end within 30 s of SIGTERM") from None
        if server is not None:
            server.output = stdout + stderr


def make_run(directory: Path, steps: int = 5, finish: bool = True) -> str:
    run = Run(directory, step_interval_s=0, heartbeat_interval_s=None)
    run.start(total_steps=steps, config={"lr": 0.1}, provenance=False)
    for step in range(1, steps + 1):
        run.step(step, loss=1.0 / step)
    if finish:
        run.finish()
    else:
        run.close()
    return run.run_id
