"""What an outsider with write access to a served directory can make the `trainwire serve`
process spend or expose, against the real process: an opening's work past its deadline, the
IPv6 loopback, half-sent requests, a stream growing while it is sent, absolute paths in rows."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from support.serve_process import ROOT, Server, make_run, serve

from trainwire import Run

#: a stream's tail this many lines long, each with this many metrics, takes seconds to fold
_SLOW_TAIL_LINES = 24_000
_SLOW_TAIL_METRICS = 200


def _slow_to_fold(directory: Path) -> None:
    """A run whose journal snapshot is sound, followed by a long tail of valid steps each
    carrying many metrics: it passes every cheap check and takes seconds to fold."""
    run = Run(directory, step_interval_s=0, heartbeat_interval_s=None)
    run.start(total_steps=10**9, config={}, provenance=False)
    run.step(1, loss=1.0)
    run.close()  # the journal's snapshot covers the stream so far
    stream = directory / "progress.jsonl"
    step = json.loads(stream.read_text().splitlines()[-1])
    with stream.open("a") as file:
        for number in range(2, _SLOW_TAIL_LINES + 2):
            metrics = {f"m{index}": number + index for index in range(_SLOW_TAIL_METRICS)}
            step.update(seq=number, step=number, loss=1.0 / number, progress=number / 10**9, metrics=metrics)
            file.write(json.dumps(step, separators=(",", ":")) + "\n")


def _cpu_settles(server: Server, *, window_s: float = 1.0, most_s: float = 0.2, within_s: float = 20.0) -> bool:
    """Whether the server's CPU time, within `within_s`, grows less than `most_s` over `window_s`."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        before = server.cpu_seconds()
        time.sleep(window_s)  # a measuring window, not a wait for an event
        if server.cpu_seconds() - before < most_s:
            return True
    return False


def test_deadline_stops_the_work_of_an_opening_and_a_failed_opening_is_not_redone(tmp_path: Path) -> None:
    _slow_to_fold(tmp_path / "hostile")
    make_run(tmp_path / "good", finish=False)
    with serve(str(tmp_path), "--deadline", "1") as server:
        with ThreadPoolExecutor(4) as pool:
            hostile = [pool.submit(server.request, "/api/runs/hostile/opening") for _ in range(3)]
            good = server.request("/api/runs/good/opening")
            answers = [future.result() for future in hostile]
        assert good[0] == 200 and json.loads(good[2])["opening_version"] == 1
        assert [status for status, _, _ in answers] == [503, 503, 503]
        assert _cpu_settles(server), "the openings went on working after their 503"
        status, headers, body = server.request("/api/runs/hostile/opening")
        assert status == 503 and int(headers["retry-after"]) > 0 and b"not tried again" in body
        assert _cpu_settles(server, within_s=2.0), "the failed opening was tried again"
        assert server.request("/api/runs/good/opening")[0] == 200
    stopped = [line for line in server.output.splitlines() if "passed its deadline" in line]
    assert stopped == ["trainwire serve: the opening of hostile passed its deadline: stopped, not tried again for 60 s"]


def test_deadline_openings_of_many_runs_at_once_take_at_most_their_own_threads(tmp_path: Path) -> None:
    _slow_to_fold(tmp_path / "hostile-0")
    for number in range(1, 8):  # the same slow stream under eight keys (hard links: no more disk)
        shutil.copytree(tmp_path / "hostile-0" / "runs", tmp_path / f"hostile-{number}" / "runs")
        os.link(tmp_path / "hostile-0" / "progress.jsonl", tmp_path / f"hostile-{number}" / "progress.jsonl")
    make_run(tmp_path / "good", finish=False)
    # the eight requests must come while the first four openings hold their threads
    with serve(str(tmp_path), "--deadline", "2") as server:
        with ThreadPoolExecutor(8) as pool:
            hostile = [pool.submit(server.request, f"/api/runs/hostile-{number}/opening") for number in range(8)]
            answers = [future.result() for future in hostile]
        assert [status for status, _, _ in answers] == [503] * 8
        messages = [json.loads(body)["error"].split(";")[0] for _, _, body in answers]
        # four were built until their deadline and are paused; the others waited for a thread and
        # are not (on a loaded machine a request may come after the first four ended: it is built)
        built = messages.count("opening this run took longer than the server's deadline")
        waited = messages.count("the server is busy opening other runs")
        assert built >= 4 and waited >= 1 and built + waited == 8, messages
        assert _cpu_settles(server), "the openings went on working after their 503"
        assert server.request("/api/runs")[0] == 200


def test_ipv6_localhost_is_answered_only_where_the_server_holds_both_loopbacks(tmp_path: Path) -> None:
    make_run(tmp_path / "a")
    squatter = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)  # another local user, first on [::1]
    squatter.bind(("::1", 0))
    squatter.listen()
    port = squatter.getsockname()[1]
    try:
        with serve(str(tmp_path), port=port) as server:
            assert server.netloc == f"127.0.0.1:{port}"
            for name in ("localhost", "[::1]"):  # a browser would try the squatter's [::1] first
                assert server.request("/api/runs", headers={"Host": f"{name}:{port}"})[0] == 403, name
            assert server.request("/api/runs")[0] == 200
        refused = subprocess.run(
            [sys.executable, "-m", "trainwire", "serve", str(tmp_path), "--host", "localhost", "--port", str(port)],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT / "python" / "src")},
            timeout=60,
        )
        assert refused.returncode == 1 and f"cannot listen on [::1]:{port}" in refused.stderr, refused.stderr
        assert "http://" not in refused.stdout
    finally:
        squatter.close()
    with serve(str(tmp_path), "--host", "localhost") as server:
        port = int(server.netloc.rsplit(":", 1)[1])
        assert server.netloc == f"localhost:{port}"
        for address in ("::1", "127.0.0.1"):
            connection = http.client.HTTPConnection(address, port, timeout=30)
            connection.request(
                "GET", "/api/runs", headers={"Host": f"localhost:{port}", "X-Trainwire-Token": server.token}
            )
            assert connection.getresponse().status == 200, address
            connection.close()


def test_slow_clients_beyond_the_connection_cap_neither_stop_the_server_nor_flood_its_log(tmp_path: Path) -> None:
    make_run(tmp_path / "a")
    with serve(str(tmp_path), open_files=160) as server:  # room for about thirty connections
        host, port = server.netloc.rsplit(":", 1)
        half_sent = []
        try:
            for _ in range(250):  # more than the file limit
                try:
                    connection = socket.create_connection((host, int(port)), timeout=2)
                    connection.sendall(f"GET /api/runs HTTP/1.1\r\nHost: {server.netloc}\r\n".encode())
                except OSError:
                    break  # the server no longer accepts: what the end of this test shows
                half_sent.append(connection)
            answered = False
            deadline = time.monotonic() + 40
            while not answered and time.monotonic() < deadline:
                try:
                    answered = server.request("/api/runs")[0] == 200
                except (OSError, http.client.HTTPException):
                    time.sleep(0.5)  # closed at once while the slow ones hold the cap: ask again
            assert answered, "the server stopped answering"
        finally:
            for connection in half_sent:
                connection.close()
    lines = server.output.splitlines()  # the URL line was read apart
    assert len(lines) <= 6 and len(server.output) < 4000 and "Traceback" not in server.output, server.output[:4000]


def _large_stream(directory: Path) -> tuple[Path, str]:
    """A run's stream of 24 MiB of whole lines (more than the socket buffers hold), and its line."""
    run = Run(directory, step_interval_s=0, heartbeat_interval_s=None)
    run.start(total_steps=10**9, config={"lr": 0.1}, provenance=False)
    run.close()
    stream = directory / "progress.jsonl"
    line = stream.read_text().splitlines()[0]
    with stream.open("a") as file:
        file.write((line + "\n") * ((24 << 20) // (len(line) + 1)))
    return stream, line


def test_growing_stream_is_sent_as_measured_when_opened(tmp_path: Path) -> None:
    stream, line = _large_stream(tmp_path / "a")
    measured = stream.stat().st_size
    with serve(str(tmp_path)) as server:
        host, port = server.netloc.rsplit(":", 1)
        connection = http.client.HTTPConnection(host, int(port), timeout=30)
        headers = {"X-Trainwire-Token": server.token}
        connection.request("GET", "/runs/a/progress.jsonl", headers=headers)
        response = connection.getresponse()
        with stream.open("a") as file:  # the writer goes on while the stream is sent
            file.write((line + "\n") * ((8 << 20) // (len(line) + 1)))
        body = response.read()
        assert response.status == 200 and int(response.headers["content-length"]) == measured
        assert len(body) == measured and body.endswith(b"\n") and body == stream.read_bytes()[:measured]
        connection.request("GET", "/api/runs", headers=headers)  # the connection is still sound
        assert connection.getresponse().status == 200
        connection.close()
    assert "Too much data" not in server.output and "Exception" not in server.output, server.output


def test_slow_clients_do_not_hold_the_server_after_sigterm(tmp_path: Path) -> None:
    _large_stream(tmp_path / "a")
    with serve(str(tmp_path)) as server:
        host, port = server.netloc.rsplit(":", 1)
        reader = socket.create_connection((host, int(port)), timeout=30)
        reader.sendall(
            f"GET /runs/a/progress.jsonl HTTP/1.1\r\nHost: {server.netloc}\r\nX-Trainwire-Token: {server.token}\r\n\r\n".encode()
        )
        assert reader.recv(1024).startswith(b"HTTP/1.1 200")  # then it reads no more
    # leaving the block sends SIGTERM and fails unless the process ends within 30 s
    assert server.process.returncode is not None
    reader.close()


def test_rows_carry_names_only_no_absolute_path(tmp_path: Path) -> None:
    make_run(tmp_path / "served" / "a")
    (tmp_path / "served" / "b").mkdir()
    make_run(tmp_path / "served" / "b" / "c", finish=False)
    with serve(str(tmp_path / "served")) as server:
        rows = server.rows()
    assert sorted(row["key"] for row in rows) == ["a", "b/c"]
    for row in rows:
        assert "path" not in row and "directory" not in row
        assert not any(isinstance(value, str) and value.startswith("/") for value in row.values()), row
    assert str(tmp_path) not in json.dumps(rows)
