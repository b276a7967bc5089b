"""`trainwire serve` as a real process on loopback: discovery, Range reads, stop, and every
guard (foreign Host, foreign Origin, missing token, read-only, paths outside the runs)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from support.paths import BROWSER_SCRIPTS, SCRIPTS
from support.serve_process import ROOT, make_run, serve

from trainwire.cli.plot import chart_specs, load_runs
from trainwire.lines.view_events import VIEW_EVENTS
from trainwire.reader.series import SeriesStore
from trainwire.reader.state import StreamReader


def test_lists_runs_and_serves_their_streams_by_range(tmp_path: Path) -> None:
    first = make_run(tmp_path / "a")
    with serve(str(tmp_path)) as server:
        assert [(row["key"], row["run_id"], row["status"]) for row in server.rows()] == [("a", first, "succeeded")]
        second = make_run(tmp_path / "team" / "b", finish=False)  # found again while serving
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            keys = {row["key"]: row for row in server.rows()}
            if "team/b" in keys:
                break
        assert keys["team/b"]["run_id"] == second and keys["team/b"]["status"] == "running"

        stream = (tmp_path / "a" / "progress.jsonl").read_bytes()
        status, headers, body = server.request("/runs/a/progress.jsonl")
        assert status == 200 and body == stream and "etag" in {name.lower() for name in headers}
        status, _, body = server.request("/runs/a/progress.jsonl", headers={"Range": f"bytes={len(stream) - 1}-"})
        assert status == 206 and body == b"\n"  # an idle poll reads one byte
        status, _, _ = server.request("/", headers={})
        assert status == 200
        # the opening from the journal snapshots, checked against the stream: the page goes on from it
        status, headers, body = server.request("/api/runs/a/opening")
        opening = json.loads(body)
        assert status == 200 and headers["content-type"] == "application/json"
        assert headers["cache-control"] == "no-store"
        whole, store = StreamReader(), SeriesStore()
        applied = whole.feed(stream)
        store.extend(applied)
        assert opening == {
            "opening_version": 1,
            "offset": len(stream),
            "state": {**whole.to_dict(), "lines": 0},  # the snapshot is at the end: no line read past it
            "series": store.to_dict(),
            "events": [line for line in applied.dicts if line["event"] in VIEW_EVENTS],
        }
        (tmp_path / "a" / "runs" / first / "series.json").write_text("{", "utf-8")  # torn: not offered
        status, _, body = server.request("/api/runs/a/opening")
        assert status == 404 and json.loads(body) == {"error": "no snapshot to open this run from"}


def test_a_short_run_then_a_long_resume_opens_from_each_run_s_snapshot(tmp_path: Path) -> None:
    """The opening reads neither run's lines before its own snapshot: the long run's, garbled
    here, would be diagnostics; it is what the stream read whole gave before they were."""
    make_run(tmp_path / "a", steps=2)
    long_run = make_run(tmp_path / "a", steps=200)
    path = tmp_path / "a" / "progress.jsonl"
    stream = path.read_bytes()
    whole, store = StreamReader(), SeriesStore()
    applied = whole.feed(stream)
    store.extend(applied)
    lines = stream.splitlines(keepends=True)
    first = next(index for index, line in enumerate(lines) if long_run.encode() in line)  # its run.started
    path.write_bytes(
        b"".join(
            b"#" * (len(line) - 1) + b"\n" if index > first and long_run.encode() in line else line
            for index, line in enumerate(lines)
        )
    )
    with serve(str(tmp_path)) as server:
        status, _, body = server.request("/api/runs/a/opening")
    assert status == 200 and json.loads(body) == {
        "opening_version": 1,
        "offset": len(stream),
        "state": {**whole.to_dict(), "lines": 0},  # both snapshots at their run's end: nothing read
        "series": store.to_dict(),
        "events": [line for line in applied.dicts if line["event"] in VIEW_EVENTS],
    }


def test_no_path_outside_the_discovered_runs(tmp_path: Path) -> None:
    make_run(tmp_path / "runs" / "a")
    (tmp_path / "secret.txt").write_text("do not serve")
    with serve(str(tmp_path / "runs")) as server:
        for path in (
            "/runs/../secret.txt/progress.jsonl",
            "/runs/..%2Fsecret.txt/progress.jsonl",
            "/runs/%2e%2e/progress.jsonl",
            "/runs/b/progress.jsonl",
            "/assets/../../secret.txt",
            "/runs/a/config.json",
            "/api/runs/../secret.txt/opening",
            "/api/runs/..%2Fsecret.txt/opening",
            "/api/runs/b/opening",
        ):
            status, _, body = server.request(path)
            assert status in (404, 400) and b"do not serve" not in body, path


def test_foreign_host_and_origin_are_refused(tmp_path: Path) -> None:
    make_run(tmp_path / "a")
    with serve(str(tmp_path)) as server:
        assert server.request("/api/runs", headers={"Host": "evil.example:80"})[0] == 403
        assert server.request("/api/runs", headers={"Host": f"rebound.example:{server.netloc.split(':')[1]}"})[0] == 403
        assert server.request("/api/runs", headers={"Origin": "http://evil.example"})[0] == 403
        assert server.request("/api/runs", headers={"Origin": f"http://{server.netloc}"})[0] == 200
        # the server holds 127.0.0.1 only: `localhost` may lead a browser to another's [::1]
        assert server.request("/api/runs", headers={"Host": f"localhost:{server.netloc.split(':')[1]}"})[0] == 403


def test_stop_needs_the_token_and_writes_the_control_file(tmp_path: Path) -> None:
    make_run(tmp_path / "a", finish=False)
    control = tmp_path / "a" / ".trainwire-stop"
    with serve(str(tmp_path)) as server:
        status, _, _ = server.request("/api/runs/a/stop", method="POST", body={"reason": "from a test"}, token=False)
        assert status == 403 and not control.exists()
        status, _, _ = server.request(
            "/api/runs/a/stop",
            method="POST",
            body={"reason": "x"},
            headers={"X-Trainwire-Token": "wrong", "Content-Type": "application/json"},
        )
        assert status == 403 and not control.exists()
        status, _, _ = server.request(
            "/api/runs/a/stop",
            method="POST",
            body={"reason": "x"},
            headers={"X-Trainwire-Token": server.token, "Origin": "http://evil.example"},
        )
        assert status == 403 and not control.exists()
        status, _, body = server.request(
            "/api/runs/a/stop",
            method="POST",
            body={"reason": "enough", "requested_by": "dashboard test"},
            headers={"X-Trainwire-Token": server.token},
        )
        assert status == 200, body
        assert json.loads(body) == {"stop_file": "a/.trainwire-stop"}  # no absolute path
        assert json.loads(control.read_text()) == {"reason": "enough", "requested_by": "dashboard test"}
        assert (
            server.request("/api/runs/nope/stop", method="POST", body={}, headers={"X-Trainwire-Token": server.token})[
                0
            ]
            == 404
        )


def test_read_only_has_no_stop(tmp_path: Path) -> None:
    make_run(tmp_path / "a", finish=False)
    with serve(str(tmp_path), "--read-only") as server:
        assert json.loads(server.request("/api/config")[2])["read_only"] is True
        status, _, _ = server.request(
            "/api/runs/a/stop", method="POST", body={}, headers={"X-Trainwire-Token": server.token}
        )
        assert status in (404, 405) and not (tmp_path / "a" / ".trainwire-stop").exists()


def test_bad_arguments_get_one_line_and_the_usage_code(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python" / "src")}
    missing = subprocess.run(
        [sys.executable, "-m", "trainwire", "serve", str(tmp_path / "missing")],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert missing.returncode == 2 and "not a directory" in missing.stderr and "Traceback" not in missing.stderr
    port = subprocess.run(
        [sys.executable, "-m", "trainwire", "serve", "--port", "70000"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert port.returncode == 2 and "port" in port.stderr


def test_the_page_follows_a_live_run_and_stops_it_in_a_real_browser(tmp_path: Path) -> None:
    screenshots = Path(os.environ.get("TRAINWIRE_SCREENSHOTS", tmp_path / "screenshots"))
    screenshots.mkdir(parents=True, exist_ok=True)
    run_dir = tmp_path / "runs" / "live"
    run_dir.parent.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python" / "src")}
    training = subprocess.Popen(
        [sys.executable, str(SCRIPTS / "live_run.py"), str(run_dir)],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        with serve(str(tmp_path / "runs")) as server:
            browser = subprocess.run(
                [
                    "node",
                    str(BROWSER_SCRIPTS / "dashboard-browser.js"),
                    f"{server.base}/?token={server.token}",
                    str(screenshots),
                ],
                capture_output=True,
                text=True,
                timeout=240,
            )
            assert browser.returncode == 0, browser.stdout + browser.stderr
            reports = [json.loads(line) for line in browser.stdout.splitlines()]
            assert [report["check"] for report in reports] == [
                "runs list",
                "progress and curve advance",
                "restart marker",
                "stopped",
                "charts",
            ]
        assert training.wait(timeout=60) == 2, training.stderr.read() if training.stderr else ""
    finally:
        if training.poll() is None:
            training.kill()
    lines = [json.loads(line) for line in (run_dir / "progress.jsonl").read_text().splitlines()]
    finished = lines[-1]
    assert finished["event"] == "run.finished" and finished["status"] == "interrupted" and finished["exit_code"] == 2
    assert finished["checkpoint"] and (run_dir / finished["checkpoint"]).is_dir()
    stop = next(line for line in lines if line["event"] == "stop.requested")
    assert (
        stop["source"] == "control_file"
        and stop["requested_by"] == "dashboard"
        and stop["reason"] == "enough from the browser test"
    )
    # the dashboard drew the charts the PNG/SVG plot draws for this run: titles, curves, markers
    drawn = [{"title": chart["title"], "series": [curve["label"] for curve in chart["series"]], "markers": [marker["kind"] for marker in chart["markers"]]}
             for chart in chart_specs(load_runs(run_dir / "progress.jsonl"))]  # fmt: skip
    assert reports[-1]["charts"] == drawn and len(drawn) >= 3
    for name in ("dashboard-runs.png", "dashboard-run.png", "dashboard-stopped.png"):
        assert (screenshots / name).read_bytes().startswith(b"\x89PNG")
