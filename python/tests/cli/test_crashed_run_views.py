"""A run killed mid-way (SIGKILL: no `run.finished`, the journal never rebuilt) as `tail`,
`runs`, `diff` and `plot` show it: at the last step it logged, which the journal's step
file holds past the stream's last step, with the last and best loss of that step; stale."""

from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path

import pytest
from support.cli_process import trainwire
from support.paths import SCRIPTS
from support.step_files import kept_records
from support.stopped_processes import stopped_when
from support.stream_files import stream_of

from trainwire._generated.contract import NOT_FINISHED_EXIT_CODE
from trainwire.cli.plot import load_runs
from trainwire.contract.layout import STEPS_FILE, run_journal_dir

SCRIPT = SCRIPTS / "fast_steps.py"
TOTAL_STEPS = 10_000_000


def streamed_steps(stream: Path) -> list[int]:
    return [line["step"] for line in stream_of(stream) if line["event"] == "train.step"]


def kept_steps(out: Path) -> list[int]:
    """The steps of the step file's whole lines (every run of `out`: it holds one)."""
    found = []
    for path in out.glob(f"runs/*/{STEPS_FILE}"):
        found += [record["step"] for record in kept_records(path)]
    return found


@pytest.fixture(scope="module")
def crashed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, int]:
    """The output directory, run id and last logged step of a run killed while its journal
    held steps past its stream's last."""
    out = tmp_path_factory.mktemp("crashed")
    stream = out / "progress.jsonl"

    def journal_ahead() -> bool:
        streamed, kept = streamed_steps(stream), kept_steps(out)
        return bool(streamed) and bool(kept) and max(kept) > max(streamed)

    ended = stopped_when(
        [sys.executable, str(SCRIPT), str(out)], journal_ahead, lambda p: p.send_signal(signal.SIGKILL)
    )
    assert ended.returncode == -signal.SIGKILL
    (started,) = [line for line in stream_of(stream) if line["event"] == "run.started"]
    last = max(kept_steps(out))
    assert last > max(streamed_steps(stream))  # the case: the stream lags the journal
    assert not (run_journal_dir(out, started["run_id"]) / "summary.json").read_text().count(f'"step": {last}')
    return out, started["run_id"], last


def stale_row(out: Path) -> dict:
    """`trainwire runs --json`'s row once the run has been silent for three heartbeats."""
    deadline = time.monotonic() + 60
    while True:
        result = trainwire("runs", str(out), "--json")
        assert result.returncode == 0, result.stderr
        (row,) = json.loads(result.stdout)
        if row["status"] == "stale":
            return row
        assert time.monotonic() < deadline, row
        time.sleep(0.2)


def test_runs_shows_the_last_logged_step_and_its_losses(crashed: tuple[Path, str, int]) -> None:
    out, run_id, last = crashed
    row = stale_row(out)
    assert (row["run_id"], row["step"]) == (run_id, last)
    assert row["last_loss"] == row["best_loss"] == pytest.approx(1000.0 / last)


def test_tail_shows_the_last_logged_step_and_says_stale(crashed: tuple[Path, str, int]) -> None:
    out, run_id, last = crashed
    stale_row(out)  # silent long enough
    result = trainwire("tail", str(out))
    assert result.returncode == NOT_FINISHED_EXIT_CODE, result.stderr
    assert result.stdout.splitlines()[-1].startswith(f"[{run_id}] stale (process gone): step {last}/{TOTAL_STEPS},")


def test_diff_shows_the_last_logged_step_and_its_losses(crashed: tuple[Path, str, int]) -> None:
    out, _run_id, last = crashed
    result = trainwire("diff", str(out), str(out), "--json")
    assert result.returncode == 0, result.stderr
    metrics = json.loads(result.stdout)["metrics"]
    assert metrics["step"] == [last, last]
    assert metrics["last loss"][0] == metrics["best loss"][0] == pytest.approx(1000.0 / last)


def test_plot_draws_every_logged_step(crashed: tuple[Path, str, int]) -> None:
    out, run_id, last = crashed
    (plotted,) = load_runs(out / "progress.jsonl")
    steps, values, _times = plotted.series.curve("loss")
    assert plotted.run_id == run_id and steps[-1] == last and values[-1] == pytest.approx(1000.0 / last)
