"""The stop's and the writer's seed rows: SIGBREAK (simulated off Windows), the process's
own code of `SystemExit`, one `trial.ended` per attempt, the run id's time equal to
`run.started.ts`, and what docs/stop.md must say."""

from __future__ import annotations

import logging
import signal
import sys
from pathlib import Path

import pytest
from support.paths import ROOT
from support.stream_files import of, stream_of

from trainwire import Run
from trainwire.contract.clock import FakeClock, format_ts


def test_sigbreak_takes_the_windows_path_and_ends_the_block_interrupted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Off Windows there is no SIGBREAK: SIGUSR1 stands in for it, through the same code path.
    if sys.platform != "win32":
        monkeypatch.setattr(signal, "SIGBREAK", signal.SIGUSR1, raising=False)
    with Run(tmp_path, step_interval_s=0) as run:
        run.start(provenance=False)
        signal.raise_signal(signal.SIGBREAK)  # type: ignore[attr-defined]  # what CTRL_BREAK_EVENT delivers
        run.step(1)
        pytest.fail("the step after SIGBREAK raises")
    stream = stream_of(tmp_path / "progress.jsonl")
    assert "sigbreak" in stream[0]["stop_channels"]
    assert [(line["source"], line["signal"]) for line in of(stream, "stop.requested")] == [("signal", "SIGBREAK")]
    assert (run.status, stream[-1]["reason"], run.exit_code) == ("interrupted", "sigbreak", 2)
    assert signal.getsignal(signal.SIGBREAK) == signal.SIG_DFL  # type: ignore[attr-defined]


@pytest.mark.parametrize(("code", "exit_code"), [(3, 3), ("bad config", 1)])
def test_system_exit_in_the_block_writes_the_processs_own_exit_code(
    tmp_path: Path, code: int | str, exit_code: int
) -> None:
    with pytest.raises(SystemExit), Run(tmp_path) as run:
        run.start(provenance=False)
        sys.exit(code)
    finished = stream_of(tmp_path / "progress.jsonl")[-1]
    assert (finished["status"], finished["exit_code"], run.exit_code) == ("failed", exit_code, exit_code)


def test_a_second_trial_ended_for_one_attempt_writes_nothing_and_warns_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING), Run(tmp_path) as run:
        run.start(provenance=False)
        run.trial_started(1)
        run.trial_ended(1, "succeeded")
        run.trial_ended(1, "failed")
        run.trial_ended(1, "pruned")
        run.trial_started(1, attempt=2)
        run.trial_ended(1, "succeeded", attempt=2)
    ended = [
        (line["trial"], line["attempt"], line["status"])
        for line in of(stream_of(tmp_path / "progress.jsonl"), "trial.ended")
    ]
    assert ended == [(1, 1, "succeeded"), (1, 2, "succeeded")]
    assert len([record for record in caplog.records if "already ended" in record.getMessage()]) == 1


def test_the_run_ids_time_is_run_starteds_ts(tmp_path: Path) -> None:
    clock = FakeClock("2026-12-07T10:00:00Z")
    run = Run(tmp_path, clock=clock, heartbeat_thread=False)
    clock.advance(75)  # the model loads
    run.start(provenance=False)
    run.finish()
    started = stream_of(tmp_path / "progress.jsonl")[0]
    assert run.run_id.startswith("20261207T100000-")
    assert started["ts"] == format_ts(clock.now() - 75) == "2026-12-07T10:00:00.000000Z"


def test_the_stop_guide_says_what_finishes_first_and_what_the_control_file_may_be_trusted_with() -> None:
    guide = (ROOT / "docs" / "stop.md").read_text(encoding="utf-8")
    assert "Work already running finishes first" in guide and "a generation batch" in guide
    assert "trust of the output directory" in guide and "not a remote-control channel" in guide
    assert "CTRL_BREAK_EVENT" in guide and "Popen.terminate()" in guide
