"""The dashboard's runs list over many runs (`many_runs`: 10,000 at full scale, half finished,
half killed mid-way): how long a fresh server takes to answer its first page, and the p99 of
50 clients polling a page each second. Each against `/api/config` on the same server, in the
same rounds: a request that does no work for the list. The first page is held to a second
(it never waits for the runs to be read); the pollers' p99 to twice the baseline's, since on
a shared 2-core machine the baseline's own p99 moves by hundreds of milliseconds."""

from __future__ import annotations

import http.client
import json
import threading
import time

from context import Context
from many_runs import RUNS_BY_SCALE, runs_tree
from records import Figure, Measurement, Target, median
from served import Served, serving

__all__ = ["FIGURES"]

CLIENTS = 50
FIRST_PAGE_ROUNDS = 3
#: the page the dashboard asks for first, and one a filter narrowed (every run id holds "run-0")
_PAGE = "/api/runs?offset=0&limit=200&sort=started_at&order=desc"
_FILTERED = "/api/runs?offset=0&limit=200&sort=key&order=asc&filter=run-0"
_CONFIG = "/api/config"


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def _get(connection: http.client.HTTPConnection, path: str, served: Served) -> dict:
    connection.request("GET", path, headers={"X-Trainwire-Token": served.token})
    response = connection.getresponse()
    body = response.read()
    if response.status != 200:
        raise RuntimeError(f"GET {path} answered {response.status}")
    return json.loads(body)


def _timed(connection: http.client.HTTPConnection, path: str, served: Served) -> tuple[float, dict]:
    started = time.perf_counter()
    answer = _get(connection, path, served)
    return time.perf_counter() - started, answer


def _first_page(ctx: Context) -> Measurement:
    runs_dir = runs_tree(ctx)
    count = RUNS_BY_SCALE.get(ctx.scale.name, 10_000)
    firsts, configs, complete, held = [], [], [], []
    for _ in range(FIRST_PAGE_ROUNDS):
        with serving(runs_dir) as served:
            connection = http.client.HTTPConnection(served.host, served.port, timeout=60)
            listening = time.perf_counter()
            seconds, page = _timed(connection, _PAGE, served)
            firsts.append(seconds)
            held.append(page["runs"])
            configs.append(_timed(connection, _CONFIG, served)[0])
            while page["scanning"]:  # polling for a condition: the server's first pass over the runs
                time.sleep(0.1)
                page = _get(connection, _PAGE, served)
            if page["total"] != count:
                raise RuntimeError(f"the runs list holds {page['total']} of {count} runs")
            complete.append(time.perf_counter() - listening)
            connection.close()
    return Measurement(
        median(firsts) * 1000,
        median(configs) * 1000,
        notes=f"{count} runs; a fresh server's first /api/runs page (200 rows; it held {min(held)}-{max(held)} "
        f"runs, the rest still being read); the whole list read after {median(complete):.1f} s (runs cache "
        "filled by the trainwire runs figure); baseline: /api/config on the same server",
    )


def _poll(served: Served, path: str, seconds: float, phase: float, latencies: list[float], failures: list[str]) -> None:
    connection = http.client.HTTPConnection(served.host, served.port, timeout=30)
    time.sleep(phase)
    started = time.monotonic()
    try:
        for tick in range(int(seconds)):
            latencies.append(_timed(connection, path, served)[0])
            # the next poll a second after this one started: a schedule, not a wait for a condition
            time.sleep(max(0.0, started + tick + 1 - time.monotonic()))
    except Exception as error:  # a failed client is reported, not hidden
        failures.append(repr(error))
    finally:
        connection.close()


def _pollers(served: Served, paths: list[str], seconds: float) -> list[float]:
    latencies: list[float] = []
    failures: list[str] = []
    clients = [
        threading.Thread(
            target=_poll, args=(served, paths[index % len(paths)], seconds, index / CLIENTS, latencies, failures)
        )
        for index in range(CLIENTS)
    ]
    for client in clients:
        client.start()
    for client in clients:
        client.join()
    if failures:
        raise RuntimeError(f"{len(failures)} clients failed, first: {failures[0]}")
    return latencies


def _polled(ctx: Context) -> Measurement:
    runs_dir = runs_tree(ctx)
    seconds = 20.0 if ctx.scale.name == "full" else 5.0
    with serving(runs_dir) as served:
        connection = http.client.HTTPConnection(served.host, served.port, timeout=60)
        while _get(connection, _PAGE, served)["scanning"]:  # polling for a condition: the list read
            time.sleep(0.1)
        connection.close()
        polled = _pollers(served, [_PAGE, _FILTERED], seconds)
        baseline = _pollers(served, [_CONFIG], seconds)
    return Measurement(
        _p99(polled) * 1000,
        _p99(baseline) * 1000,
        notes=f"{RUNS_BY_SCALE.get(ctx.scale.name, 10_000)} runs; {CLIENTS} clients spread over the second, "
        f"{len(polled)} requests over {seconds:.0f} s, half the newest page, half a filtered page sorted by "
        "folder; baseline: the same clients polling /api/config",
    )


FIGURES = [
    Figure(
        "serve: /api/runs first page at 10,000 runs",
        "ms",
        Target("<= 1000 ms", "value_at_most", 1000.0),
        _first_page,
    ),
    Figure(
        "serve: /api/runs, 50 clients polling each second at 10,000 runs (p99)",
        "ms",
        Target("<= 2x polling /api/config", "ratio_at_most", 2.0),
        _polled,
    ),
]
