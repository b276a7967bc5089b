"""The `trainwire` command, run as a real process (`python -m trainwire ...`), and the tail view."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from trainwire.conformance.paths import cases_dir
from trainwire.contract import canonical
from trainwire.reader.state import read_state
from trainwire.cli.tail import NOT_FINISHED_EXIT_CODE, tail

ROOT = Path(__file__).resolve().parents[2]


def event(seq: int, name: str, run_id: str = "r1", **payload: Any) -> bytes:
    envelope = {"schema_version": 1, "seq": seq, "ts": f"2026-11-29T10:00:{seq:02d}.000000Z", "run_id": run_id, "event": name}
    return json.dumps({**envelope, **payload}).encode() + b"\n"


def stream(status: str | None = "interrupted", run_id: str = "r1") -> bytes:
    data = b"".join([
        event(1, "run.started", run_id, producer={"name": "t", "version": "1"}, total_steps=100, heartbeat_interval_s=5),
        event(2, "phase.started", run_id, phase="train"),
        event(3, "train.step", run_id, step=40, total_steps=100, epoch=0.4, loss=1.5, learning_rate=1e-3, elapsed_s=4.0, eta_s=6.0, progress=0.4),
        event(4, "train.restarted", run_id, reason="oom", attempt=2, previous_step=40, step=0, batch_size_from=16, batch_size_to=8),
        event(5, "checkpoint.saved", run_id, step=10, path="checkpoint-10", reason="stop"),
        event(6, "stop.requested", run_id, source="signal", signal="SIGTERM", reason=None, requested_by=None),
    ])
    if status is not None:
        data += event(7, "run.finished", run_id, status=status, exit_code=2, error=None, reason="sigterm", step=10,
                      checkpoint="checkpoint-10", duration_s=7.0, metrics={}, artifacts={})
    return data


def trainwire(*arguments: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "trainwire", *arguments], capture_output=True, text=True, timeout=timeout, cwd=ROOT)


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


@pytest.mark.parametrize(
    ("arguments", "code", "says"),
    [
        (["state", "missing.jsonl"], 1, "missing.jsonl: no such file"),
        (["validate", "."], 1, "is a directory"),
        (["state", "--bogus", "x"], 2, "unrecognized arguments: --bogus"),
        (["state", "x", "--stale-after", "5"], 2, "--stale-after needs --now"),
        (["stop", "no-such-dir"], 1, "no-such-dir: not a directory"),
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


def test_tail_prints_plain_lines_and_exits_with_the_run_exit_code(tmp_path: Path) -> None:
    path = tmp_path / "progress.jsonl"
    path.write_bytes(stream("interrupted"))
    result = trainwire("tail", str(path))
    assert result.returncode == 2
    lines = result.stdout.splitlines()
    assert lines[0] == "[r1] run started by t 1, total steps 100"
    assert "[r1] step 40/100 (40%) loss 1.5 lr 1.00e-03 eta 6.0s" in lines
    assert any("restarted (oom): attempt 2 from step 0" in line for line in lines)
    assert lines[-1].startswith("[r1] interrupted: step 0/100")


class _WatchedStop(threading.Event):
    """The follower's stop event, telling the test each time the follower goes idle (waits for bytes)."""

    def __init__(self) -> None:
        super().__init__()
        self.idle = threading.Event()

    def wait(self, timeout: float | None = None) -> bool:
        self.idle.set()
        return super().wait(timeout)

    def next_idle(self) -> None:
        """Wait until the follower has read everything there is and waits again."""
        self.idle.clear()
        assert self.idle.wait(timeout=30), "the follower never went idle"
        self.idle.clear()
        assert self.idle.wait(timeout=30), "the follower never went idle"


def test_tail_follow_waits_for_the_file_and_follows_until_the_run_finishes(tmp_path: Path) -> None:
    path = tmp_path / "later" / "progress.jsonl"
    out, err, stop = io.StringIO(), io.StringIO(), _WatchedStop()
    exit_codes: list[int] = []
    follower = threading.Thread(
        target=lambda: exit_codes.append(tail(path, follow=True, poll_interval_s=0.01, out=out, err=err, tty=False, stop=stop))
    )
    follower.start()
    try:
        stop.next_idle()  # it looked for the file, found none, and waits
        assert follower.is_alive()
        path.parent.mkdir()
        data = stream("succeeded")
        half = data.index(b"train.step")
        path.write_bytes(data[:half])
        stop.next_idle()
        assert follower.is_alive()  # still following: the run has not finished
        assert out.getvalue().splitlines()[0] == "[r1] run started by t 1, total steps 100"
        with open(path, "ab") as handle:
            handle.write(data[half:])
        follower.join(timeout=30)
        assert not follower.is_alive()
    finally:
        stop.set()
        follower.join(timeout=30)
    assert exit_codes == [0], err.getvalue()
    assert out.getvalue().splitlines()[-1].startswith("[r1] succeeded")


def test_tail_follow_from_the_command_line_ends_with_the_run(tmp_path: Path) -> None:
    path = tmp_path / "progress.jsonl"
    path.write_bytes(stream("succeeded"))
    result = trainwire("tail", "--follow", "--poll", "0.02", str(path))
    assert result.returncode == 0, result.stderr
    assert "run finished: succeeded" in result.stdout


def test_stop_creates_the_control_file(tmp_path: Path) -> None:
    result = trainwire("stop", str(tmp_path), "--reason", "enough", "--by", "ci")
    assert result.returncode == 0, result.stderr
    body = json.loads((tmp_path / ".trainwire-stop").read_text())
    assert body == {"reason": "enough", "requested_by": "ci"}


def test_schema_prints_the_packaged_bundle() -> None:
    result = trainwire("schema", "--family", "reader-state-v1")
    assert result.returncode == 0
    assert json.loads(result.stdout) == json.loads((ROOT / "schemas" / "bundled" / "reader-state-v1.schema.json").read_text())


def test_tail_on_a_terminal_redraws_one_status_line() -> None:
    out, err = io.StringIO(), io.StringIO()
    path = cases_dir() / "oom-restart" / "stream.ndjson"
    code = tail(path, out=out, err=err, tty=True)
    text = out.getvalue()
    assert code == 0
    assert "\r\x1b[K" in text and "restarts 1" in text and "%" in text and "step " in text
    assert "train.step" not in text and " step 1/" not in text.split("\r\x1b[K")[0]
    assert text.endswith("\n") and "succeeded" in text.splitlines()[-1]


def test_tail_of_an_unfinished_run_says_so(tmp_path: Path) -> None:
    path = tmp_path / "progress.jsonl"
    path.write_bytes(stream(None) + b"junk\n")
    out, err = io.StringIO(), io.StringIO()
    assert tail(path, out=out, err=err, tty=False) == NOT_FINISHED_EXIT_CODE
    assert out.getvalue().splitlines()[-1].startswith("[r1] ")
    assert "line 7: invalid_json" in err.getvalue()
