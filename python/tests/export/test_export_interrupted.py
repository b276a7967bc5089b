"""Exports killed at seeded random moments (SIGKILL and SIGINT, to the whole process group as a
terminal does) and run again: every point arrives once, none twice, in one tracker run, read
back with MLflow's client, TensorBoard's EventAccumulator and W&B's offline files."""

from __future__ import annotations

import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient
from support.paths import ROOT
from test_export_mlflow import mlflow_run
from test_export_tensorboard import accumulated
from test_export_wandb import history, of_type, offline_runs, records

from trainwire import Run
from trainwire.export.scalars import safe_name

STEPS = 1500
#: kills per tracker, at seeded moments: bounded, so the test's time is
KILLS = 3


@pytest.fixture(scope="module")
def logged(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """Two runs of one stream: the first with every step in the stream (several chunks of
    it), the second resuming it with its steps kept in its journal's step file (the throttle);
    an evaluation every 100 steps."""
    output = tmp_path_factory.mktemp("logged")
    run_ids = []
    for interval in (0, 60):
        with Run(output, step_interval_s=interval, heartbeat_interval_s=None) as run:
            run.start(total_steps=STEPS, config={"lr": 0.1}, provenance=False)
            with run.phase("train"):
                for step in range(1, STEPS + 1):
                    run.step(step, loss=1.0 / step)
                    if step % 100 == 0:
                        run.eval(step, {"loss": 2.0 / step})
        run_ids.append(run.run_id)
    return output, run_ids


def expected_losses() -> Counter[tuple[int, float]]:
    return Counter((step, round(1.0 / step, 6)) for step in range(1, STEPS + 1))


def interrupted_then_whole(arguments: list[str], started: Callable[[], bool], seed: int, kills: int = KILLS) -> None:
    """Runs `trainwire export ...` `kills` times, each stopped at a random moment once `started()`
    (the tracker got something), by SIGKILL or SIGINT, then once more to its end."""
    moments = random.Random(seed)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python" / "src")}
    command = [sys.executable, "-m", "trainwire", "export", *arguments]
    signals = moments.sample([signal.SIGKILL, signal.SIGINT, signal.SIGKILL, signal.SIGINT], kills)
    # the first soon after the tracker got its first write (a tracker run just made), the
    # others anywhere in a few batches' time
    latest = [0.15, *[0.8] * (kills - 1)]
    for sent, within in zip(signals, latest, strict=True):
        process = subprocess.Popen(
            command, env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        try:
            while not started() and process.poll() is None:
                time.sleep(0.01)
            try:  # the moment, unless it ends first
                process.wait(timeout=moments.uniform(0.0, within))
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, sent)
                process.wait(timeout=60)
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            process.stderr.close()  # type: ignore[union-attr]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr


def copy_of(logged: tuple[Path, list[str]], tmp_path: Path) -> Path:
    output = tmp_path / "out"
    shutil.copytree(logged[0], output)
    return output


def holds_a_run(database: Path) -> Callable[[], bool]:
    def found() -> bool:
        try:
            with sqlite3.connect(database, timeout=0.1) as connection:
                return bool(connection.execute("select count(*) from runs").fetchone()[0])
        except sqlite3.Error:  # not made yet
            return False

    return found


def holds(directory: Path, pattern: str) -> Callable[[], bool]:
    return lambda: any(directory.glob(pattern))


def test_mlflow_gets_every_point_once_in_one_run(logged: tuple[Path, list[str]], tmp_path: Path) -> None:
    output = copy_of(logged, tmp_path)
    database = tmp_path / "store.db"
    arguments = ["mlflow", str(output), "--tracking-uri", f"sqlite:///{database}", "--experiment", "killed"]
    # two kills: each MLflow process takes seconds to start
    interrupted_then_whole([*arguments, "--batch-events", "100"], holds_a_run(database), seed=44, kills=2)

    client = MlflowClient(f"sqlite:///{database}")
    experiment = client.get_experiment_by_name("killed").experiment_id
    # one MLflow run each: no second, no empty RUNNING one
    assert [run.info.status for run in client.search_runs([experiment])] == ["FINISHED", "FINISHED"]
    for run_id in logged[1]:
        found = mlflow_run(client, "killed", run_id).info.run_id
        losses = Counter((m.step, round(m.value, 6)) for m in client.get_metric_history(found, "train/loss"))
        assert losses == expected_losses()
        assert len(client.get_metric_history(found, "eval/loss")) == STEPS // 100


def test_tensorboard_gets_every_point_once(logged: tuple[Path, list[str]], tmp_path: Path) -> None:
    output = copy_of(logged, tmp_path)
    logdir = tmp_path / "tb"
    arguments = ["tensorboard", str(output), "--logdir", str(logdir)]
    interrupted_then_whole([*arguments, "--batch-events", "200"], holds(logdir, "*/events.out.tfevents.*"), seed=7)

    for run_id in logged[1]:
        board = accumulated(logdir, run_id)
        losses = Counter((event.step, round(event.value, 6)) for event in board.Scalars("train/loss"))
        assert losses == expected_losses()
        assert len(board.Scalars("eval/loss")) == STEPS // 100


def test_wandb_gets_every_point_once_in_one_run(logged: tuple[Path, list[str]], tmp_path: Path) -> None:
    output = copy_of(logged, tmp_path)
    arguments = ["wandb", str(output)]
    interrupted_then_whole([*arguments, "--batch-events", "1000"], holds(output / "wandb", "offline-run-*"), seed=3)

    for run_id in logged[1]:
        parts = [records(part) for part in offline_runs(output, run_id)]
        assert {of_type(found, "run")[0].run_id for found in parts} == {safe_name(run_id)}  # one W&B run, in parts
        rows = [row for found in parts for row in history(found)]
        losses = Counter((row["train/step"], round(row["train/loss"], 6)) for row in rows if "train/loss" in row)
        assert losses == expected_losses()
        assert sum("eval/loss" in row for row in rows) == STEPS // 100
        assert of_type(parts[-1], "exit")[0].exit_code == 0
