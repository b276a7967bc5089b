"""The `trainwire` command, run as a real process (`python -m trainwire ...`), and the tail view."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.paths import ROOT

from trainwire.cli.tail import NOT_FINISHED_EXIT_CODE, tail
from trainwire.conformance.paths import cases_dir
from trainwire.contract import canonical
from trainwire.contract.status import EXIT_CODES
from trainwire.reader.state import read_state


def event(seq: int, name: str, run_id: str = "r1", **payload: Any) -> bytes:
    envelope = {
        "schema_version": 1,
        "seq": seq,
        "ts": f"2026-11-29T10:00:{seq:02d}.000000Z",
        "run_id": run_id,
        "event": name,
    }
    return json.dumps({**envelope, **payload}).encode() + b"\n"


def stream(status: str | None = "interrupted", run_id: str = "r1", heartbeat: bool = True) -> bytes:
    liveness = {"heartbeat_interval_s": 5} if heartbeat else {}
    data = b"".join(
        [
            event(1, "run.started", run_id, producer={"name": "t", "version": "1"}, total_steps=100, **liveness),
            event(2, "phase.started", run_id, phase="train"),
            event(
                3,
                "train.step",
                run_id,
                step=40,
                total_steps=100,
                epoch=0.4,
                loss=1.5,
                learning_rate=1e-3,
                elapsed_s=4.0,
                eta_s=6.0,
                progress=0.4,
            ),
            event(
                4,
                "train.restarted",
                run_id,
                reason="oom",
                attempt=2,
                previous_step=40,
                step=0,
                batch_size_from=16,
                batch_size_to=8,
            ),
            event(5, "checkpoint.saved", run_id, step=10, path="checkpoint-10", reason="stop"),
            event(6, "stop.requested", run_id, source="signal", signal="SIGTERM", reason=None, requested_by=None),
        ]
    )
    if status is not None:
        data += event(
            7,
            "run.finished",
            run_id,
            status=status,
            exit_code=EXIT_CODES[status],  # the status's own code: no host code of its own
            error=None,
            reason="sigterm",
            step=10,
            checkpoint="checkpoint-10",
            duration_s=7.0,
            metrics={},
            artifacts={},
        )
    return data


def trainwire(*arguments: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trainwire", *arguments], capture_output=True, text=True, timeout=timeout, cwd=ROOT
    )


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return lines[0]


def test_state_prints_the_canonical_state(tmp_path: Path) -> None:
    path = tmp_path / "progress.jsonl"
    path.write_bytes(stream(None) + b"oops\n")
    result = trainwire("state", str(path), "--now", "2026-11-29T10:01:00Z", "--stale-after", "30")
    assert result.returncode == 0
    expected = read_state(path.read_bytes(), now="2026-11-29T10:01:00Z", stale_after_s=30)
    assert result.stdout == canonical.dumps(expected) + "\n"
    assert expected["runs"][0]["status"] == "stale"


@pytest.mark.parametrize("command", [["state"], ["validate"], ["validate", "--json"]])
def test_state_and_validate_take_a_run_directory_as_tail_does(tmp_path: Path, command: list[str]) -> None:
    (tmp_path / "progress.jsonl").write_bytes(stream("interrupted") + b"oops\n")
    of_the_file = trainwire(*command, str(tmp_path / "progress.jsonl"))
    of_the_directory = trainwire(*command, str(tmp_path))
    assert of_the_file.returncode == (0 if command == ["state"] else 1)  # the bad line is an error
    assert (of_the_directory.returncode, of_the_directory.stdout) == (of_the_file.returncode, of_the_file.stdout)
    assert of_the_directory.stderr == ""


def test_runs_lists_the_newest_start_first_by_its_instant_not_its_text(tmp_path: Path) -> None:
    # the same second with and without a fraction: as text, `05Z` sorts after `05.5Z`
    for name, ts in [("whole", "2026-11-29T10:00:05Z"), ("later", "2026-11-29T10:00:05.5Z")]:
        line = json.loads(event(1, "run.started", name, producer={"name": "t", "version": "1"}, total_steps=None))
        (tmp_path / name).mkdir()
        (tmp_path / name / "progress.jsonl").write_text(json.dumps({**line, "ts": ts}) + "\n", encoding="utf-8")
    listing = trainwire("runs", str(tmp_path), "--json")
    assert listing.returncode == 0, listing.stderr
    assert [row["run_id"] for row in json.loads(listing.stdout)] == ["later", "whole"]


@pytest.mark.parametrize(
    ("arguments", "code", "says"),
    [
        (["state", "missing.jsonl"], 1, "missing.jsonl: no such file"),
        (["validate", "."], 1, ".: no progress.jsonl in this directory"),
        (["runs", "no-such-dir"], 1, "no-such-dir: no such directory"),
        (["state", "--bogus", "x"], 2, "unrecognized arguments: --bogus"),
        (["state", "x", "--stale-after", "5"], 2, "--stale-after needs --now"),
        (["stop", "no-such-dir"], 2, "no-such-dir: no such directory"),
        (["stop", "missing/"], 2, "missing: no such directory"),
        (["stop", "README.md"], 2, "README.md: not a directory"),
        (["state", "x", "--now", "2026-13-45T10:00:00Z"], 2, "--now: not a valid time (month must be in 1..12)"),
        (["state", "x", "--now", "2026-02-30T10:00:00Z"], 2, "--now: not a valid time"),
        (["state", "x", "--now", "yesterday"], 2, "--now: not an RFC 3339 time"),
        (["tail", "x", "--poll", "inf"], 2, "--poll: must be a finite number of seconds"),
        (["tail", "x", "--poll", "nan"], 2, "--poll: must be a finite number of seconds"),
        (["tail", "x", "--timeout", "5"], 2, "--timeout needs --follow"),
        (["plot", "x", "--out", "plot.txt"], 2, "give a file ending in .html, .png, .svg"),
    ],
)
def test_errors_are_one_line_on_stderr_with_a_non_zero_exit(arguments: list[str], code: int, says: str) -> None:
    result = trainwire(*arguments)
    assert result.returncode == code
    assert says in one_error_line(result)


def test_validate_reports_violations_as_text_and_json(tmp_path: Path) -> None:
    clean = tmp_path / "clean.jsonl"
    clean.write_bytes(stream("interrupted"))
    assert trainwire("validate", str(clean)).returncode == 0
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(stream(None) + b"{bad\n")
    result = trainwire("validate", str(broken), "--json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["valid"] is False
    assert [(v["line"], v["rule"]) for v in report["violations"]] == [(6, "not_finished"), (7, "invalid_json")]


def test_validate_strict_fails_on_warnings_and_usage_errors_stay_2(tmp_path: Path) -> None:
    slipped = tmp_path / "slipped.jsonl"
    slipped.write_bytes(stream("interrupted").replace(b'"event": "phase.started"', b'"event": "phase.startd"'))
    relaxed = trainwire("validate", str(slipped))
    assert relaxed.returncode == 0, relaxed.stdout
    assert "warning event_name_near_miss" in relaxed.stdout and "[event]" in relaxed.stdout
    assert relaxed.stdout.rstrip().endswith("0 error(s), 1 warning(s)")
    strict = trainwire("validate", "--strict", "--json", str(slipped))
    assert strict.returncode == 1
    (found,) = json.loads(strict.stdout)["violations"]
    assert (found["rule"], found["severity"], found["field"]) == ("event_name_near_miss", "warning", "event")
    assert trainwire("validate", "--strict").returncode == 2


def test_validate_streams_the_file_with_memory_bounded_by_the_longest_line(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    heartbeat = b'{"schema_version":1,"seq":%d,"ts":"2026-11-29T10:00:01.000000Z","run_id":"r1","event":"run.heartbeat","x_pad":"%s"}\n'
    lines = [event(1, "run.started", producer={"name": "t", "version": "1"}, total_steps=None)]
    lines += [heartbeat % (seq, b"p" * 400) for seq in range(2, 60_002)]
    finished = event(
        60_002,
        "run.finished",
        status="succeeded",
        exit_code=0,
        error=None,
        reason=None,
        step=None,
        checkpoint=None,
        duration_s=1.0,
        metrics={},
        artifacts={},
    )
    path.write_bytes(b"".join(lines) + finished.replace(b"10:00:60002", b"10:00:02"))
    size_mb = path.stat().st_size / 2**20
    probe = (
        "import resource, sys; from pathlib import Path; from trainwire.reader.invariants import check_file, check_stream\n"
        "check_stream(Path(sys.argv[1]).read_bytes()[:100000].rsplit(b'\\n', 1)[0] + b'\\n')  # warm up the imports\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "violations = check_file(Path(sys.argv[1]))\n"
        "print(len(violations), (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe, str(path)], capture_output=True, text=True, timeout=300, cwd=ROOT
    )
    count, grown_mb = result.stdout.split()
    assert result.returncode == 0 and count == "0", result.stdout + result.stderr
    assert size_mb > 24 and float(grown_mb) < size_mb / 4


def test_tail_prints_plain_lines_and_exits_with_the_run_exit_code(tmp_path: Path) -> None:
    path = tmp_path / "progress.jsonl"
    path.write_bytes(stream("interrupted"))
    result = trainwire("tail", str(path))
    assert result.returncode == 2
    lines = result.stdout.splitlines()
    assert lines[0] == "[r1] run started by t 1, total steps 100"
    assert "[r1] step 40/100 (40%) loss 1.5 lr 1.00e-03 eta 6.0s" in lines
    assert any("restarted (oom): attempt 2 from step 0" in line for line in lines)
    # the verdict's last step is `run.finished.step`, as on every surface
    assert lines[-1].startswith("[r1] interrupted: step 10/100, 7.0s, best loss 1.5, checkpoint checkpoint-10,")


def test_demo_train_refuses_an_output_dir_it_cannot_write() -> None:
    result = trainwire("demo", "train", "--output-dir", "/proc/x")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "--output-dir: /proc/x: cannot write there" in result.stderr.splitlines()[-1]


@pytest.mark.parametrize("given", ["file", "run directory"])
def test_tail_follow_waits_for_the_file_and_follows_until_the_run_finishes(tmp_path: Path, given: str) -> None:
    # a writer without heartbeats: the run never turns stale, tail follows it to the end
    directory = tmp_path / "later"
    path = directory / "progress.jsonl"
    directory.mkdir()
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "trainwire",
            "tail",
            "--follow",
            "--poll",
            "0.02",
            str(path if given == "file" else directory),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        waiting = child.stderr.readline()  # type: ignore[union-attr]
        assert waiting == f"waiting for {path} (it does not exist yet)\n"
        data = stream("succeeded", heartbeat=False)
        half = data.index(b"train.step")
        path.write_bytes(data[:half])
        assert child.stdout.readline().startswith("[r1] run started")  # type: ignore[union-attr]
        assert child.poll() is None  # still following: the run has not finished
        with open(path, "ab") as handle:
            handle.write(data[half:])
        out, err = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 0, err
    assert out.splitlines()[-1].startswith("[r1] succeeded")
    assert "run finished: succeeded" in out


def test_tail_follow_ends_with_code_5_once_the_run_is_stale(tmp_path: Path) -> None:
    # a writer that died: its last line is long past three heartbeat intervals (15 s)
    path = tmp_path / "progress.jsonl"
    path.write_bytes(stream(None))
    result = trainwire("tail", "--follow", "--poll", "0.02", str(path), timeout=30)
    assert result.returncode == NOT_FINISHED_EXIT_CODE
    assert result.stdout.splitlines()[-1].startswith("[r1] stale: step 0/100")


def test_tail_follow_timeout_ends_a_run_without_heartbeats_and_a_missing_file(tmp_path: Path) -> None:
    silent = tmp_path / "silent.jsonl"
    silent.write_bytes(stream(None, heartbeat=False))
    result = trainwire("tail", "--follow", "--poll", "0.02", "--timeout", "1", str(silent), timeout=30)
    assert result.returncode == NOT_FINISHED_EXIT_CODE
    assert result.stdout.splitlines()[-1].startswith("[r1] stale:")
    missing = tmp_path / "never" / "progress.jsonl"
    result = trainwire("tail", "--follow", "--poll", "0.02", "--timeout", "0.3", str(missing.parent), timeout=30)
    assert result.returncode == NOT_FINISHED_EXIT_CODE
    assert result.stderr == f"waiting for {missing} (it does not exist yet)\n"
    assert result.stdout == "no run in the stream yet\n"


def test_tail_escapes_control_characters_from_the_stream(tmp_path: Path) -> None:
    path = tmp_path / "progress.jsonl"
    hostile = "\x1b]0;owned\x07\x1b[2J\u202e\x9b"
    path.write_bytes(
        b"".join(
            [
                event(1, "run.started", producer={"name": "t\x1b[31m", "version": "1"}, total_steps=10),
                event(2, "eval.completed", step=1, epoch=None, split="v\x1b[2J", metrics={"acc\x07": 1}),
                event(3, "stop.requested", source="api", signal=None, reason=hostile, requested_by="\x1b[2Jme"),
            ]
        )
    )
    result = trainwire("tail", str(path))
    assert result.returncode == NOT_FINISHED_EXIT_CODE
    assert "\x1b" not in result.stdout and "\u202e" not in result.stdout and "\x9b" not in result.stdout
    assert "run started by t\\x1b[31m 1" in result.stdout
    assert "eval (v\\x1b[2J) at step 1: acc\\x07 1" in result.stdout
    assert "stop requested (api) by \\x1b[2Jme: \\x1b]0;owned\\x07\\x1b[2J\\u202e\\x9b" in result.stdout


def test_tail_of_a_directory_of_runs_shows_each_and_exits_with_the_highest_code(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "progress.jsonl").write_bytes(stream("succeeded", run_id="ra"))
    (tmp_path / "b" / "progress.jsonl").write_bytes(stream("interrupted", run_id="rb"))
    result = trainwire("tail", str(tmp_path))
    assert result.returncode == 2
    assert result.stdout.splitlines()[-2:] == [
        "[ra] succeeded: step 10/100, 7.0s, best loss 1.5, checkpoint checkpoint-10, reason sigterm, 1 restart(s)",
        "[rb] interrupted: step 10/100, 7.0s, best loss 1.5, checkpoint checkpoint-10, reason sigterm, 1 restart(s)",
    ]


def test_stop_creates_the_control_file(tmp_path: Path) -> None:
    result = trainwire("stop", str(tmp_path), "--reason", "enough", "--by", "ci", "--no-wait")
    assert result.returncode == 0, result.stderr
    body = json.loads((tmp_path / ".trainwire-stop").read_text())
    assert body == {"reason": "enough", "requested_by": "ci"}


def test_schema_prints_the_packaged_bundle() -> None:
    result = trainwire("schema", "--family", "reader-state-v1")
    assert result.returncode == 0
    assert json.loads(result.stdout) == json.loads(
        (ROOT / "schemas" / "bundled" / "reader-state-v1.schema.json").read_text()
    )


def test_tail_on_a_terminal_redraws_one_status_line() -> None:
    out, err = io.StringIO(), io.StringIO()
    path = cases_dir() / "oom-restart" / "stream.ndjson"
    code = tail(path, out=out, err=err, tty=True)
    text = out.getvalue()
    assert code == 0
    assert "\r\x1b[J" in text and "restarts 1" in text and "%" in text and "step " in text
    assert "train.step" not in text and " step 1/" not in text.split("\r\x1b[J")[0]
    assert text.endswith("\n") and "succeeded" in text.splitlines()[-1]


def test_tail_of_an_unfinished_run_says_so(tmp_path: Path) -> None:
    path = tmp_path / "progress.jsonl"
    path.write_bytes(stream(None) + b"junk\n")
    out, err = io.StringIO(), io.StringIO()
    assert tail(path, out=out, err=err, tty=False) == NOT_FINISHED_EXIT_CODE
    assert out.getvalue().splitlines()[-1].startswith("[r1] ")
    assert "line 7: invalid_json" in err.getvalue()
