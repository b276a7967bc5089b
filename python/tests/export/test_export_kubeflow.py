"""`trainwire export kubeflow RUN [--follow]`: a stream written elsewhere posted to a TrainJob's
status with the reporter's mapping, every post valid against the CRD, idempotent."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.cli_process import trainwire
from support.kubeflow_server import KubeflowJob
from support.paths import ROOT

from trainwire import Run
from trainwire.writer.kubeflow.environment import REPORTER_VARIABLE


@pytest.fixture
def job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[KubeflowJob]:
    """The server; the variables are set for the export only (the test's own runs do not report)."""
    for name in ("KUBEFLOW_TRAINER_SERVER_URL", REPORTER_VARIABLE, "TRAINWIRE_KUBEFLOW", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    made = KubeflowJob(tmp_path)
    yield made
    made.close()


def export(job: KubeflowJob, *arguments: str) -> subprocess.CompletedProcess[str]:
    options = ["--url", job.url, "--ca-cert", str(job.ca_file), "--token-file", str(job.token_file)]
    return trainwire("export", "kubeflow", *arguments, *options)


def write_run(directory: Path) -> None:
    with Run(directory, step_interval_s=0, journal=False) as run:
        run.start(total_steps=4, total_epochs=1)
        for step in range(1, 5):
            run.step(step, loss=1.0 / step, learning_rate=0.1)
        run.eval(4, {"accuracy": 0.75})


def final_metrics(job: KubeflowJob) -> dict[str, str]:
    return {m["name"]: m["value"] for m in job.server.posts[-1].body["trainerStatus"]["metrics"]}


def test_an_export_posts_the_stream_once_valid_and_ending_at_100(job: KubeflowJob, tmp_path: Path) -> None:
    write_run(tmp_path / "out")
    done = export(job, str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    posts = job.server.posts
    assert len(posts) >= 2 and all(post.answered == 200 and post.token == "token-one" for post in posts)
    assert posts[-1].body["trainerStatus"]["progressPercentage"] == 100
    assert final_metrics(job)["loss"] == "0.25" and final_metrics(job)["status"] == "succeeded"
    again = export(job, str(tmp_path / "out"))
    assert again.returncode == 0, again.stderr
    assert len(job.server.posts) == len(posts)  # nothing new: nothing posted
    cursors = list((tmp_path / "out" / ".trainwire-export").iterdir())
    assert cursors and not [path for path in cursors if b"token-one" in path.read_bytes()]  # never kept


def test_an_export_that_follows_a_stream_posts_what_the_run_itself_posts(
    job: KubeflowJob, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = tmp_path / "out"
    directory.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python" / "src")}
    options = ["--url", job.url, "--ca-cert", str(job.ca_file), "--token-file", str(job.token_file)]
    follower = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "trainwire",
            "export",
            "kubeflow",
            str(directory),
            "--follow",
            "--poll",
            "0.05",
            *options,
        ],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        write_run(directory)
        assert follower.wait(timeout=60) == 0, follower.stderr.read() if follower.stderr else ""
    finally:
        follower.kill()
        if follower.stderr:
            follower.stderr.close()
    exported = job.server.posts[-1].body["trainerStatus"]
    assert exported["progressPercentage"] == 100
    # the run itself, inside the TrainJob, to the same server: the same last status
    job.server.posts.clear()
    for name, value in job.variables().items():
        monkeypatch.setenv(name, value)
    write_run(tmp_path / "own")
    reported = job.server.posts[-1].body["trainerStatus"]
    assert {**reported, "lastUpdatedTime": None} == {**exported, "lastUpdatedTime": None}
    assert not [post.errors for post in job.server.posts if post.errors]


def test_a_status_the_trainjob_did_not_take_is_posted_again_by_the_next_export(
    job: KubeflowJob, tmp_path: Path
) -> None:
    write_run(tmp_path / "out")
    job.server.answer = lambda post: 503 if post.body["trainerStatus"].get("progressPercentage") == 100 else 200
    failed = export(job, str(tmp_path / "out"))
    assert failed.returncode != 0 and "did not take the last status" in failed.stderr
    assert "token-one" not in failed.stderr
    job.server.answer = lambda post: 200
    job.server.posts.clear()
    done = export(job, str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert len(job.server.posts) == 1 and job.server.posts[0].body["trainerStatus"]["progressPercentage"] == 100


def test_an_export_without_an_endpoint_says_what_it_needs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("KUBEFLOW_TRAINER_SERVER_URL", "KUBEFLOW_TRAINER_SERVER_CA_CERT", "KUBEFLOW_TRAINER_SERVER_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    write_run(tmp_path / "out")
    done = trainwire("export", "kubeflow", str(tmp_path / "out"))
    assert done.returncode != 0 and "KUBEFLOW_TRAINER_SERVER_URL" in done.stderr
