"""`trainwire serve` against an outsider, as a real process: files outside the served
directories, FIFOs, the token on every data route, binding beyond loopback, hostile stop
bodies, finished runs, and the headers every answer carries."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from support.serve_process import ROOT, make_run, serve

from trainwire.contract.files import NotARegularFile, open_regular
from trainwire.contract.layout import run_journal_dir
from trainwire.serve.index import RunIndex

SECRET = "the server must never send this"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory beside the served one, holding a secret and a stream of its own."""
    directory = tmp_path / "outside"
    make_run(directory / "run")
    (directory / "secret.txt").write_text(SECRET)
    return directory


def test_a_link_named_like_a_stream_that_leads_outside_is_neither_listed_nor_served(
    tmp_path: Path, outside: Path
) -> None:
    served = tmp_path / "runs"
    make_run(served / "good")
    (served / "x").mkdir()
    (served / "x" / "progress.jsonl").symlink_to(outside / "secret.txt")
    (served / "y").mkdir()
    (served / "y" / "progress.jsonl").symlink_to(outside / "run" / "progress.jsonl")  # a valid stream, outside
    (served / "inner").mkdir()
    (served / "inner" / "progress.jsonl").symlink_to(served / "good" / "progress.jsonl")  # inside: allowed
    with serve(str(served)) as server:
        keys = [row["key"] for row in server.rows()]
        assert keys == ["good", "inner"]
        for key in ("x", "y"):
            status, _, body = server.request(f"/runs/{key}/progress.jsonl")
            assert status == 404 and SECRET.encode() not in body and b"run.started" not in body
        assert server.request("/runs/inner/progress.jsonl")[2] == (served / "good" / "progress.jsonl").read_bytes()
    skipped = [line for line in server.output.splitlines() if "skipped" in line]
    assert sorted(skipped) == [
        "trainwire serve: skipped x/progress.jsonl: a link leading outside the served directory",
        "trainwire serve: skipped y/progress.jsonl: a link leading outside the served directory",
    ]


def test_a_linked_directory_leading_outside_is_not_followed(tmp_path: Path, outside: Path) -> None:
    served = tmp_path / "runs"
    make_run(served / "good")
    (served / "elsewhere").symlink_to(outside, target_is_directory=True)
    with serve(str(served)) as server:
        assert [row["key"] for row in server.rows()] == ["good"]
        for path in ("/runs/elsewhere/run/progress.jsonl", "/runs/elsewhere/progress.jsonl"):
            assert server.request(path)[0] == 404
    assert (
        "trainwire serve: skipped elsewhere: a link leading outside the served directory (not followed)"
        in server.output.splitlines()
    )


def test_a_fifo_named_like_a_stream_or_a_summary_never_freezes_the_server(tmp_path: Path) -> None:
    served = tmp_path / "runs"
    good = make_run(served / "good", finish=False)
    (served / "pipe").mkdir()
    os.mkfifo(served / "pipe" / "progress.jsonl")
    summary = run_journal_dir(served / "good", good) / "summary.json"
    os.mkfifo(summary.with_name("summary.json.fifo"))
    summary.unlink()
    os.rename(summary.with_name("summary.json.fifo"), summary)  # the journal, a FIFO now
    with serve(str(served)) as server:
        rows = server.rows()  # a blocked open would hold the runs list's thread: never done
        assert [(row["key"], row["run_id"]) for row in rows] == [("good", good)]
        assert server.request("/runs/pipe/progress.jsonl")[0] == 404
        assert server.request("/runs/good/progress.jsonl")[0] == 200
    assert "trainwire serve: skipped pipe/progress.jsonl: a FIFO" in server.output.splitlines()


def test_a_journal_leading_outside_is_not_read(tmp_path: Path, outside: Path) -> None:
    served = tmp_path / "runs"
    own = make_run(served / "good")
    summary = run_journal_dir(served / "good", own) / "summary.json"
    summary.unlink()
    (other,) = (outside / "run" / "runs").iterdir()
    summary.symlink_to(other / "summary.json")  # another run's record
    with serve(str(served)) as server:
        rows = server.rows()
        assert [(row["key"], row["run_id"]) for row in rows] == [("good", own)]  # read from the stream itself
        assert server.request("/api/runs/good/opening")[0] == 404  # nor opened from it


def test_a_snapshot_leading_outside_is_not_opened_from(tmp_path: Path, outside: Path) -> None:
    served = tmp_path / "runs"
    own = make_run(served / "good")
    with serve(str(served)) as server:
        assert server.request("/api/runs/good/opening")[0] == 200
        snapshot = run_journal_dir(served / "good", own) / "series.json"
        (outside / "series.json").write_bytes(snapshot.read_bytes())  # the same bytes, outside the root
        snapshot.unlink()
        snapshot.symlink_to(outside / "series.json")
        assert server.request("/api/runs/good/opening")[0] == 404


def test_unknown_keys_never_walk_the_tree(tmp_path: Path) -> None:
    make_run(tmp_path / "a")
    index = RunIndex([tmp_path]).start()
    try:
        walks = index.scans
        for number in range(200):
            assert index.stream(f"missing-{number}") is None
        assert index.scans == walks  # only the background thread walks
        assert index.stream("a") is not None and index.stream("a").path == (tmp_path / "a" / "progress.jsonl").resolve()
    finally:
        index.stop()


def test_clients_asking_for_unknown_keys_do_not_stop_the_others(tmp_path: Path) -> None:
    for number in range(300):
        (tmp_path / f"d{number}" / "e").mkdir(parents=True)
    make_run(tmp_path / "a")
    stream = (tmp_path / "a" / "progress.jsonl").read_bytes()
    with serve(str(tmp_path)) as server:
        failures: list[str] = []

        def ask_unknown(client: int) -> None:
            for number in range(50):
                status = server.request(f"/runs/gone-{client}-{number}/progress.jsonl")[0]
                if status != 404:
                    failures.append(f"unknown key answered {status}")

        clients = [threading.Thread(target=ask_unknown, args=(client,)) for client in range(4)]
        for client in clients:
            client.start()
        for _ in range(20):
            assert server.request("/runs/a/progress.jsonl")[2] == stream
            assert [row["key"] for row in server.rows()] == ["a"]
        for client in clients:
            client.join(timeout=120)
        assert failures == [] and not any(client.is_alive() for client in clients)


def test_every_data_route_needs_the_token_and_the_page_does_not(tmp_path: Path) -> None:
    make_run(tmp_path / "a", finish=False)
    with serve(str(tmp_path)) as server:
        for path, method in (
            ("/api/runs", "GET"),
            ("/api/config", "GET"),
            ("/runs/a/progress.jsonl", "GET"),
            ("/runs/a/progress.jsonl", "HEAD"),
            ("/api/runs/a/stop", "POST"),
            ("/api/runs/a/opening", "GET"),
            ("/runs/missing/progress.jsonl", "GET"),
            ("/api/unknown", "GET"),
        ):
            status, _, body = server.request(path, method=method, token=False, body=b"{}" if method == "POST" else None)
            assert status == 403, (path, method, status)
            wrong = server.request(
                path,
                method=method,
                headers={"X-Trainwire-Token": server.token + "x"},
                body=b"{}" if method == "POST" else None,
            )
            assert wrong[0] == 403, (path, method)
        assert not (tmp_path / "a" / ".trainwire-stop").exists()
        for path in (
            "/",
            f"/?token={server.token}",
            "/assets/dashboard.js",
            "/assets/dashboard.css",
            "/favicon.ico",
            "/assets/favicon.svg",
        ):
            status, headers, body = server.request(path, token=False)
            assert status == 200 and body, path
        assert b'rel="icon"' in server.request("/", token=False)[2]
        config = json.loads(server.request("/api/config")[2])
        assert config["roots"] == [tmp_path.name] and str(tmp_path) not in json.dumps(config)
    assert server.token not in server.output  # never logged, the page's own URL included


def test_every_answer_carries_the_security_headers(tmp_path: Path) -> None:
    make_run(tmp_path / "a")
    with serve(str(tmp_path)) as server:
        for path, token in (
            ("/", False),
            ("/assets/dashboard.js", False),
            ("/api/runs", True),
            ("/api/runs", False),
            ("/runs/a/progress.jsonl", True),
            ("/runs/nope/progress.jsonl", True),
            ("/api/runs/a/opening", True),
            ("/api/runs/a/opening", False),
            ("/api/runs/nope/opening", True),
        ):
            _, headers, _ = server.request(path, token=token)
            named = {name.lower(): value for name, value in headers.items()}
            policy = named.get("content-security-policy", "")
            assert (
                "frame-ancestors 'none'" in policy and "script-src 'self'" in policy and "unsafe-inline" not in policy
            ), path
            assert named.get("x-content-type-options") == "nosniff" and named.get("referrer-policy") == "no-referrer", (
                path
            )


def test_binding_beyond_loopback_needs_allowed_hosts_and_says_who_can_reach_it(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python" / "src")}
    refused = subprocess.run(
        [sys.executable, "-m", "trainwire", "serve", str(tmp_path), "--host", "0.0.0.0", "--port", "0"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert refused.returncode == 2 and "--allow-host" in refused.stderr and "Traceback" not in refused.stderr
    bad = subprocess.run(
        [sys.executable, "-m", "trainwire", "serve", str(tmp_path), "--allow-host", "http://x/"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert bad.returncode == 2 and "not a host name" in bad.stderr
    make_run(tmp_path / "a")
    with serve(str(tmp_path), "--host", "0.0.0.0", "--allow-host", "Trainwire.Test") as server:
        port = server.netloc.rsplit(":", 1)[1]
        connection_to = server.base.replace("0.0.0.0", "127.0.0.1")
        server.base = connection_to  # traffic stays on loopback; only the Host header names others
        assert server.request("/api/runs", headers={"Host": f"trainwire.test:{port}"})[0] == 200
        assert server.request("/api/runs", headers={"Host": f"127.0.0.1:{port}"})[0] == 200
        assert server.request("/api/runs", headers={"Host": f"localhost:{port}"})[0] == 403  # 0.0.0.0 is not [::1]
        assert server.request("/api/runs", headers={"Host": f"evil.example:{port}"})[0] == 403
        assert server.request("/api/runs", headers={"Host": "trainwire.test:1"})[0] == 403
    warning = [line for line in server.output.splitlines() if "warning" in line]
    assert len(warning) == 1 and "beyond this machine" in warning[0] and "trainwire.test:" in warning[0]


def test_the_stop_route_refuses_large_nested_and_malformed_bodies(tmp_path: Path) -> None:
    make_run(tmp_path / "a", finish=False)
    control = tmp_path / "a" / ".trainwire-stop"
    with serve(str(tmp_path)) as server:
        stop = "/api/runs/a/stop"
        assert server.request(stop, method="POST", body={"reason": "x" * 5000})[0] == 413
        assert _chunked_post(server.netloc, stop, server.token, b'{"reason": "' + b"y" * 20000 + b'"}') == 413
        nested = b"[" * 2000 + b"]" * 2000
        assert server.request(stop, method="POST", body=nested)[0] == 400
        assert server.request(stop, method="POST", body={"reason": {"a": {"b": {"c": {"d": 1}}}}})[0] == 400
        for body in (b"not json", b"[1, 2]", b'{"reason": 5}', b"\xff\xfe"):
            status, _, answer = server.request(stop, method="POST", body=body)
            assert status == 400 and b"Traceback" not in answer, body
        assert not control.exists()
        assert server.request(stop, method="POST", body={"reason": "fine"})[0] == 200 and control.exists()


def test_a_run_that_has_ended_is_not_left_a_stop_file(tmp_path: Path) -> None:
    make_run(tmp_path / "done")
    with serve(str(tmp_path)) as server:
        status, _, body = server.request("/api/runs/done/stop", method="POST", body={"reason": "too late"})
        assert status == 409 and b"succeeded" in body
    assert not (tmp_path / "done" / ".trainwire-stop").exists()


def test_open_regular_refuses_fifos_without_blocking_and_links_out_of_a_directory(tmp_path: Path) -> None:
    (tmp_path / "inside").mkdir()
    os.mkfifo(tmp_path / "inside" / "pipe")
    (tmp_path / "outside.txt").write_text(SECRET)
    (tmp_path / "inside" / "out").symlink_to(tmp_path / "outside.txt")
    (tmp_path / "inside" / "real.txt").write_text("ok")
    (tmp_path / "inside" / "in").symlink_to(tmp_path / "inside" / "real.txt")
    with pytest.raises(NotARegularFile, match="not a regular file"):
        open_regular(tmp_path / "inside" / "pipe")
    with pytest.raises(NotARegularFile, match="not a regular file"):
        open_regular(tmp_path / "inside")
    with pytest.raises(NotARegularFile, match="leads outside"):
        open_regular(tmp_path / "inside" / "out", within=tmp_path / "inside")
    with open_regular(tmp_path / "inside" / "out") as file:  # no boundary asked: a link is a file
        assert file.read() == SECRET.encode()
    with open_regular(tmp_path / "inside" / "in", within=tmp_path / "inside") as file:
        assert file.read() == b"ok"


def _chunked_post(netloc: str, path: str, token: str, body: bytes) -> int:
    """A POST whose body comes in chunks, with no Content-Length to check up front."""
    connection = http.client.HTTPConnection(netloc, timeout=30)
    try:
        connection.request(
            "POST",
            path,
            body=iter([body[i : i + 1024] for i in range(0, len(body), 1024)]),
            headers={"X-Trainwire-Token": token},
            encode_chunked=True,
        )
        return connection.getresponse().status
    finally:
        connection.close()
