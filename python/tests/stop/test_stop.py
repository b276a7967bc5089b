"""The cooperative stop: control file, API requests and signals (trainwire.stop)."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from support.paths import SCRIPTS

from trainwire.contract.clock import FakeClock
from trainwire.contract.errors import RunInterrupted
from trainwire.contract.models import EVENT_ADAPTER
from trainwire.stop import MAX_BODY_BYTES, STOP_FILE, StopControl, StopRequest, process_start_time, request_stop
from trainwire.writer.run import Run

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX signals")


def events(path: Path) -> list[dict]:
    lines = path.read_text(encoding="utf-8").splitlines()
    for line in lines:
        EVENT_ADAPTER.validate_json(line, strict=True)
    return [json.loads(line) for line in lines]


# -- controller side ------------------------------------------------------------------------


def test_request_stop_writes_the_body_atomically(tmp_path: Path) -> None:
    path = request_stop(tmp_path, reason="budget exhausted", requested_by="ci")
    assert path == tmp_path / STOP_FILE
    assert json.loads(path.read_text(encoding="utf-8")) == {"reason": "budget exhausted", "requested_by": "ci"}
    assert [p.name for p in tmp_path.iterdir()] == [STOP_FILE]  # no temp file left behind


def test_request_stop_without_details_writes_an_empty_object(tmp_path: Path) -> None:
    assert json.loads(request_stop(tmp_path).read_text(encoding="utf-8")) == {}


def test_request_stop_replaces_an_earlier_request(tmp_path: Path) -> None:
    request_stop(tmp_path, reason="first")
    request_stop(tmp_path, reason="second")
    assert json.loads((tmp_path / STOP_FILE).read_text(encoding="utf-8")) == {"reason": "second"}


def test_request_stop_needs_an_existing_directory(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        request_stop(tmp_path / "missing")


def test_request_stop_clips_long_texts(tmp_path: Path) -> None:
    body = json.loads(request_stop(tmp_path, reason="x" * 5000).read_text(encoding="utf-8"))
    assert body == {"reason": "x" * 200}


# -- the control file -----------------------------------------------------------------------


def backdate(path: Path, seconds_before_start: float) -> None:
    """Gives `path` a modification time from before this process started."""
    then = process_start_time() - seconds_before_start
    os.utime(path, (then, then))


def test_a_file_older_than_the_process_is_stale_and_removed(tmp_path: Path) -> None:
    backdate(request_stop(tmp_path, reason="left over"), 60)
    control = StopControl(tmp_path)
    assert not (tmp_path / STOP_FILE).exists()
    assert control.check() is None
    assert not control.requested


def test_a_file_written_since_the_process_started_is_a_request(tmp_path: Path) -> None:
    # e.g. a controller asked while the model was loading, before the StopControl existed
    request_stop(tmp_path, reason="during model load")
    control = StopControl(tmp_path)
    assert control.check() == StopRequest(source="control_file", reason="during model load")


def test_the_process_start_time_is_before_now_and_in_a_subprocess_after_ours(tmp_path: Path) -> None:
    ours = process_start_time()
    assert ours <= time.time()
    script = "from trainwire.stop import process_start_time; print(repr(process_start_time()))"
    theirs = float(subprocess.run([sys.executable, "-c", script], capture_output=True, check=True, text=True).stdout)
    assert theirs >= ours and theirs <= time.time() + 1  # /proc's boot time is whole seconds


def test_rearm_forgets_the_honoured_request_and_writes_to_the_new_run(tmp_path: Path) -> None:
    first = Run(tmp_path, step_interval_s=0, heartbeat_interval_s=None)
    control = StopControl(tmp_path, run=first)
    control.request(reason="first")
    second = Run(tmp_path, step_interval_s=0, heartbeat_interval_s=None)
    control.rearm(second)
    assert control.check() is None and not control.requested
    control.request(reason="second")
    stops = [
        (line["run_id"], line["reason"])
        for line in events(tmp_path / "progress.jsonl")
        if line["event"] == "stop.requested"
    ]
    assert stops == [(first.run_id, "first"), (second.run_id, "second")]


def test_the_file_is_honoured_once_and_removed(tmp_path: Path) -> None:
    control = StopControl(tmp_path)
    request_stop(tmp_path, reason="enough", requested_by="alice")
    found = control.check()
    assert found == StopRequest(source="control_file", reason="enough", requested_by="alice")
    assert found.finish_reason == "control_file"
    assert control.requested
    assert not (tmp_path / STOP_FILE).exists()
    assert control.check() is found  # later checks return the same request


def test_the_file_is_read_at_most_once_per_interval(tmp_path: Path) -> None:
    clock = FakeClock()
    control = StopControl(tmp_path, check_interval_s=1.0, clock=clock)
    assert control.check() is None  # the first check reads at once
    request_stop(tmp_path)
    clock.advance(0.5)
    assert control.check() is None
    assert (tmp_path / STOP_FILE).exists()
    clock.advance(0.5)
    assert control.check() is not None


def test_a_symlink_is_ignored_with_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    control = StopControl(tmp_path, check_interval_s=0)
    target = tmp_path / "elsewhere.json"
    target.write_text('{"reason": "via link"}', encoding="utf-8")
    (tmp_path / STOP_FILE).symlink_to(target)
    with caplog.at_level(logging.WARNING, logger="trainwire.stop"):
        assert control.check() is None
        assert control.check() is None
    assert sum("symlink" in record.getMessage() for record in caplog.records) == 1  # warned once
    assert target.exists() and (tmp_path / STOP_FILE).is_symlink()


@pytest.mark.parametrize(
    "body",
    [b"not json", b"[1, 2]", b"\xff\xfe", b'{"reason": "' + b"y" * MAX_BODY_BYTES + b'"}'],
    ids=["malformed", "not-an-object", "not-utf8", "too-large"],
)
def test_a_bad_body_is_ignored_but_the_stop_counts(
    tmp_path: Path, body: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    control = StopControl(tmp_path)
    (tmp_path / STOP_FILE).write_bytes(body)
    with caplog.at_level(logging.WARNING, logger="trainwire.stop"):
        assert control.check() == StopRequest(source="control_file")
    assert any("body" in record.getMessage() for record in caplog.records)


def test_body_fields_of_the_wrong_type_are_dropped(tmp_path: Path) -> None:
    control = StopControl(tmp_path)
    (tmp_path / STOP_FILE).write_text('{"reason": 5, "requested_by": "bob", "x_extra": true}', encoding="utf-8")
    assert control.check() == StopRequest(source="control_file", requested_by="bob")


def test_no_output_dir_watches_no_file(tmp_path: Path) -> None:
    control = StopControl(None)
    assert control.check() is None
    assert control.request(reason="from code").source == "api"


# -- API and phase boundaries ---------------------------------------------------------------


def test_raise_if_stopped_raises_with_the_reason(tmp_path: Path) -> None:
    control = StopControl(tmp_path)
    control.raise_if_stopped()  # nothing asked yet
    control.request(reason="user clicked stop", requested_by="ui")
    with pytest.raises(RunInterrupted) as raised:
        control.raise_if_stopped()
    assert raised.value.reason == "api"


def test_the_first_honoured_request_is_written_once(tmp_path: Path) -> None:
    run = Run(tmp_path)
    run.start(total_steps=10, provenance=False)
    control = StopControl(tmp_path, run=run, check_interval_s=0)
    request_stop(tmp_path, reason="enough", requested_by="alice")
    assert control.check() is not None
    control.request(reason="again")
    request_stop(tmp_path)
    control.check()
    run.finish("interrupted", reason=control.honoured.finish_reason)
    stream = events(tmp_path / "progress.jsonl")
    stops = [line for line in stream if line["event"] == "stop.requested"]
    assert stops == [
        {**stops[0], "source": "control_file", "signal": None, "reason": "enough", "requested_by": "alice"}
    ]
    assert stream[-1]["status"] == "interrupted" and stream[-1]["reason"] == "control_file"


def test_concurrent_requests_are_honoured_once(tmp_path: Path) -> None:
    run = Run(tmp_path)
    run.start(total_steps=None, provenance=False)
    control = StopControl(tmp_path, run=run)
    threads = [threading.Thread(target=control.request, kwargs={"reason": str(i)}) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    run.finish("interrupted", reason="api")
    assert sum(line["event"] == "stop.requested" for line in events(tmp_path / "progress.jsonl")) == 1


# -- signals --------------------------------------------------------------------------------


@posix_only
def test_a_signal_is_recorded_and_handlers_are_restored(tmp_path: Path) -> None:
    previous = signal.getsignal(signal.SIGTERM)
    control = StopControl(tmp_path).install_signal_handlers()
    try:
        os.kill(os.getpid(), signal.SIGTERM)  # delivered to this (main) thread before kill returns
        assert control.requested
        found = control.check()
        assert found == StopRequest(source="signal", signal="SIGTERM")
        assert found.finish_reason == "sigterm"
    finally:
        control.uninstall()
    assert signal.getsignal(signal.SIGTERM) is previous
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_handlers_are_installed_from_the_main_thread_only(tmp_path: Path) -> None:
    control = StopControl(tmp_path)
    errors: list[BaseException] = []

    def install() -> None:
        try:
            control.install_signal_handlers()
        except RuntimeError as error:
            errors.append(error)

    thread = threading.Thread(target=install)
    thread.start()
    thread.join()
    assert len(errors) == 1


@posix_only
@pytest.mark.parametrize("count, expected", [(1, 2), (2, -signal.SIGTERM)], ids=["one-graceful", "two-hard"])
def test_a_second_signal_kills_the_hard_way(tmp_path: Path, count: int, expected: int) -> None:
    # A plain Python loop (no torch): fast to start, and the real signal path. With two
    # signals the loop lingers after the first, like a slow checkpoint save.
    command = [sys.executable, str(SCRIPTS / "stop_loop.py"), str(tmp_path)] + (["--linger"] if count == 2 else [])
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "ready"
        process.send_signal(signal.SIGTERM)
        assert process.stdout.readline().strip() == "signalled"
        if count == 2:
            process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == expected
    finally:
        process.kill()
        process.wait()
    stream = events(tmp_path / "progress.jsonl")
    assert [line["event"] for line in stream].count("stop.requested") == 1
    if count == 1:
        assert stream[-1]["event"] == "run.finished"
        assert stream[-1]["status"] == "interrupted" and stream[-1]["reason"] == "sigterm"
        assert stream[-1]["exit_code"] == 2
    else:
        assert stream[-1]["event"] != "run.finished"  # a hard kill writes nothing


def test_the_core_and_the_demo_entry_do_not_import_torch() -> None:
    # A dashboard that only reads, or a controller that only stops, must not pay for torch.
    code = (
        "import sys, trainwire.stop, trainwire.cli.demo, trainwire.integrations, trainwire.integrations.distributed;"
        "heavy = [name for name in ('torch', 'transformers') if name in sys.modules];"
        "sys.exit(', '.join(heavy) or None)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
