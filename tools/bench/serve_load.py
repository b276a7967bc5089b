"""Many viewers of one server: 50 clients polling a live run each second, 50 tabs opening a
35 MB stream at once. Loopback only; bounded in clients, requests and time."""

from __future__ import annotations

import http.client
import shutil
import subprocess
import threading
import time

from context import Context
from records import Figure, Measurement, Target
from scale import MB
from served import Served, run_directory, serving

from trainwire import Run

__all__ = ["FIGURES"]

CLIENTS = 50
#: the stream 50 tabs open at once (or the scale's large stream when smaller)
OPEN_BYTES = 35 * MB
_READ_BYTES = 1 << 20


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def _get(connection: http.client.HTTPConnection, path: str, served: Served, headers: dict[str, str]) -> bytes:
    connection.request("GET", path, headers={"X-Trainwire-Token": served.token, **headers})
    response = connection.getresponse()
    body = bytearray()
    while chunk := response.read(_READ_BYTES):
        body += chunk
    if response.status not in (200, 206, 416):
        raise RuntimeError(f"GET {path} answered {response.status}")
    return bytes(body)


def _poll(served: Served, seconds: float, phase: float, latencies: list[float], failures: list[str]) -> None:
    """One page following the run: its stream from the last offset each second, the runs list
    every other; `phase` (0-1 s) places its polls in the second, as pages opened at different
    moments do."""
    connection = http.client.HTTPConnection(served.host, served.port, timeout=30)
    stream = f"/runs/{served.key}/progress.jsonl"
    time.sleep(phase)
    offset, started = 0, time.monotonic()
    try:
        for tick in range(int(seconds)):
            for path, headers in [(stream, {"Range": f"bytes={offset}-"})] + ([("/api/runs", {})] if tick % 2 else []):
                before = time.monotonic()
                body = _get(connection, path, served, headers)
                latencies.append(time.monotonic() - before)
                if path == stream:
                    offset += len(body)
            # the next poll a second after this one started: a schedule, not a wait for a condition
            time.sleep(max(0.0, started + tick + 1 - time.monotonic()))
    except Exception as error:  # a failed client is reported, not hidden
        failures.append(repr(error))
    finally:
        connection.close()


def _live_polls(ctx: Context) -> Measurement:
    seconds = 20.0 if ctx.scale.name == "full" else 5.0
    directory = ctx.scratch_dir("live") / "live"
    run = Run(directory, step_interval_s=0, heartbeat_interval_s=None)
    run.start(total_steps=1_000_000, config={"lr": 0.1}, provenance=False)
    writing = threading.Event()

    def steps() -> None:
        step = 0
        while not writing.wait(0.01):  # a step every 10 ms while the clients poll
            step += 1
            run.step(step, loss=1.0 / step)

    writer = threading.Thread(target=steps, daemon=True)
    writer.start()
    latencies: list[float] = []
    failures: list[str] = []
    try:
        with serving(directory) as served:
            clients = [
                threading.Thread(target=_poll, args=(served, seconds, index / CLIENTS, latencies, failures))
                for index in range(CLIENTS)
            ]
            for client in clients:
                client.start()
            for client in clients:
                client.join()
    finally:
        writing.set()
        writer.join()
        run.finish()
    if failures:
        raise RuntimeError(f"{len(failures)} clients failed, first: {failures[0]}")
    return Measurement(
        _p99(latencies) * 1000,
        notes=f"{CLIENTS} clients spread over the second, {len(latencies)} requests over {seconds:.0f} s (the "
        "stream from its offset each second, the runs list every other)",
    )


def _open_at_once(ctx: Context) -> Measurement:
    """50 `curl` processes, started together, each reading the whole stream: a client in C, so
    the two cores go to the server, not to the clients reading 1.75 GB in Python."""
    curl = shutil.which("curl")
    if curl is None:
        raise RuntimeError("curl is not on PATH")
    stream = ctx.stream(min(OPEN_BYTES, ctx.scale.large_bytes))
    directory = run_directory(stream, ctx.scratch_dir("open") / "run")
    with serving(directory) as served:
        url = f"http://{served.host}:{served.port}/runs/{served.key}/progress.jsonl"
        command = [curl, "-sS", "-o", "/dev/null", "-w", "%{http_code} %{size_download} %{time_total}"]
        tabs = [
            subprocess.Popen(
                [*command, "-H", f"X-Trainwire-Token: {served.token}", url], stdout=subprocess.PIPE, text=True
            )
            for _ in range(CLIENTS)
        ]
        answers = [tab.communicate(timeout=120)[0].split() for tab in tabs]
    size = stream.stat().st_size
    wrong = [answer for answer in answers if answer[:2] != ["200", str(size)]]
    if wrong:
        raise RuntimeError(f"{len(wrong)} tabs did not read the stream, first: {wrong[0]}")
    return Measurement(
        _p99([float(answer[2]) for answer in answers]), notes=f"{CLIENTS} tabs (curl), {size / MB:.0f} MB stream each"
    )


FIGURES = [
    Figure(
        "serve: 50 clients polling a live run each second (p99)",
        "ms",
        Target("<= 100 ms", "value_at_most", 100.0),
        _live_polls,
    ),
    Figure(
        "serve: 50 tabs opening a 35 MB stream at once (p99)",
        "s",
        Target("<= 2 s", "value_at_most", 2.0),
        _open_at_once,
    ),
]
