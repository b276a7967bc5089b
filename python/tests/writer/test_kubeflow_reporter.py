"""A run inside a Kubeflow TrainJob posts its progress to the job's status server: at the
start and the end, authorised, every body valid against the TrainJob CRD; a server that
refuses, fails, hangs or cannot be trusted never reaches training."""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import trustme
from support.kubeflow_server import KubeflowJob, Post, job_in_environment

from trainwire import Run
from trainwire.writer.kubeflow.environment import REPORTER_VARIABLE


@pytest.fixture
def job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[KubeflowJob]:
    made = job_in_environment(tmp_path, monkeypatch)
    yield made
    made.close()


def metrics_of(post: Post) -> dict[str, str]:
    return {metric["name"]: metric["value"] for metric in post.body["trainerStatus"].get("metrics", [])}


def last_status(job: KubeflowJob) -> dict[str, object]:
    return job.server.posts[-1].body["trainerStatus"]


def test_a_plain_run_posts_at_start_and_end_each_authorised_and_valid(job: KubeflowJob, tmp_path: Path) -> None:
    with Run(tmp_path / "out", step_interval_s=0) as run:
        assert run.reports_to_kubeflow
        run.start(total_steps=4, total_epochs=2)
        for step in range(1, 5):
            run.step(step, loss=1.0 / step, learning_rate=0.01, epoch=step / 2)
        run.eval(4, {"accuracy": 0.9}, epoch=2)
    posts = job.server.posts
    assert len(posts) >= 2
    assert [post.errors for post in posts if post.errors] == []
    assert all(post.token == "token-one" and post.answered == 200 for post in posts)
    assert "progressPercentage" not in posts[0].body["trainerStatus"] or posts[0].body["trainerStatus"][
        "progressPercentage"
    ] in (0, None)
    final = last_status(job)
    assert final["progressPercentage"] == 100
    assert final["estimatedRemainingSeconds"] == 0
    metrics = metrics_of(posts[-1])
    assert metrics["loss"] == "0.25"
    assert metrics["status"] == "succeeded"
    assert metrics["eval_accuracy"] == "0.9"
    assert metrics["total_epochs"] == "2"
    assert metrics["step"] == "4"


def test_a_server_answering_503_leaves_the_run_succeeded_with_exit_0(job: KubeflowJob, tmp_path: Path) -> None:
    job.server.answer = lambda post: 503
    script = textwrap.dedent(
        f"""
        from trainwire import Run
        with Run({str(tmp_path / "out")!r}) as run:
            run.start(total_steps=2)
            run.step(1, loss=0.5)
            run.step(2, loss=0.25)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert '"status":"succeeded"' in (tmp_path / "out" / "progress.jsonl").read_text().replace(" ", "")
    assert job.server.posts and all(post.answered == 503 and not post.errors for post in job.server.posts)
    warnings = [line for line in done.stderr.splitlines() if "not posted to its TrainJob" in line]
    assert len(warnings) == 1 and "HTTP 503" in warnings[0]
    assert "token-one" not in done.stderr


@pytest.mark.parametrize(("answer", "said"), [(403, "HTTP 403"), (422, "HTTP 422")])
def test_a_refused_post_is_logged_once_and_training_goes_on(
    job: KubeflowJob, tmp_path: Path, caplog: pytest.LogCaptureFixture, answer: int, said: str
) -> None:
    job.server.answer = lambda post: answer
    with caplog.at_level(logging.DEBUG, "trainwire"), Run(tmp_path / "out") as run:
        run.start(total_steps=3)
        for step in (1, 2):
            run.eval(step, {"accuracy": step / 10})
            job.server.wait_for(lambda posts, n=step: len(posts) >= n + 1)
    assert run.status == "succeeded"
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and "TrainJob" in r.getMessage()]
    assert len(warnings) == 1 and said in warnings[0].getMessage()
    assert all(post.answered == answer for post in job.server.posts)


def test_a_hung_server_holds_the_end_of_the_run_for_a_short_bounded_time(job: KubeflowJob, tmp_path: Path) -> None:
    job.server.hang.set()
    began = time.monotonic()
    with Run(tmp_path / "out") as run:
        run.start(total_steps=2)
        run.step(1, loss=0.5)
    took = time.monotonic() - began
    assert run.status == "succeeded"
    assert took < 4.0, f"the run's end waited {took:.1f} s for a hung server"


def test_a_server_the_ca_file_does_not_vouch_for_is_never_sent_the_token(
    job: KubeflowJob, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    trustme.CA().cert_pem.write_to_path(str(job.ca_file))  # another CA: the server's certificate fails
    with caplog.at_level(logging.WARNING, "trainwire"), Run(tmp_path / "out") as run:
        run.start(total_steps=1)
        run.step(1, loss=0.5)
    assert run.status == "succeeded"
    assert job.server.posts == []
    # the refusal is said: the certificate's, once; a connection the server dropped while the client
    # refused it is reset, and an earlier test's reporter, left posting to its hung server (a run's
    # end waits for it at most 2 s), may warn of that server's refusal while this test runs
    warnings = [r.getMessage() for r in caplog.records if "TrainJob" in r.getMessage()]
    assert len([warning for warning in warnings if "CERTIFICATE_VERIFY_FAILED" in warning]) == 1, warnings
    refusals = ("CERTIFICATE_VERIFY_FAILED", "ConnectionRefused", "ConnectionReset")
    assert all(any(refusal in warning for refusal in refusals) for warning in warnings), warnings


def test_the_token_is_read_again_for_each_post_when_it_rotates(job: KubeflowJob, tmp_path: Path) -> None:
    with Run(tmp_path / "out") as run:
        run.start(total_steps=2)
        job.server.wait_for(lambda posts: len(posts) >= 1)
        job.rotate_token("token-two")
        run.eval(1, {"accuracy": 0.5})
        job.server.wait_for(lambda posts: len(posts) >= 2)
    assert [post.token for post in job.server.posts][:2] == ["token-one", "token-two"]
    assert all(post.answered == 200 for post in job.server.posts)


def test_the_token_is_never_logged_written_or_journalled(
    job: KubeflowJob, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    secret = secrets.token_hex(16)  # in no file of the tree (the journal keeps its dirty diff)
    job.rotate_token(secret)
    job.server.answer = lambda post: 500
    with caplog.at_level(logging.DEBUG), Run(tmp_path / "out") as run:
        run.start(total_steps=1, config={"lr": 0.1})
        run.step(1, loss=0.5)
    assert job.server.posts[0].token == secret
    assert secret not in caplog.text
    written = [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert written and not [p for p in written if secret.encode() in p.read_bytes()]


def test_long_metric_names_are_cut_to_the_crd_limit_and_stay_apart(job: KubeflowJob, tmp_path: Path) -> None:
    long_a, long_b = "x" * 100 + "_a", "x" * 100 + "_b"
    with Run(tmp_path / "out") as run:
        run.start(total_steps=1)
        run.eval(1, {long_a: 1.0, long_b: 2.0, "v": "y" * 200})
    assert not [post.errors for post in job.server.posts if post.errors]
    names = [name for name in metrics_of(job.server.posts[-1]) if name.startswith("eval_x")]
    assert len(names) == 2 and all(len(name) == 64 and "~" in name for name in names)


def test_a_search_reports_its_trials_and_the_best(job: KubeflowJob, tmp_path: Path) -> None:
    with Run(tmp_path / "out") as run:
        run.start(total_trials=4)
        for trial in (1, 2):
            run.trial_started(trial, {"lr": trial / 10})
            run.step(1, loss=0.5, trial=trial)
            run.trial_ended(
                trial, "succeeded", metrics={"loss": 0.5}, best={"trial": 1, "metric": "loss", "value": 0.5}
            )
        job.server.wait_for(lambda posts: any(metrics_of(p).get("trials_done") == "2" for p in posts))
        middle = next(p for p in job.server.posts if metrics_of(p).get("trials_done") == "2")
        assert middle.body["trainerStatus"]["progressPercentage"] == 50
        assert metrics_of(middle)["best_loss"] == "0.5"
        assert metrics_of(middle)["trials_total"] == "4"
    assert not [post.errors for post in job.server.posts if post.errors]


@pytest.mark.parametrize("ending", ["stop", "crash"])
def test_a_stopped_or_crashed_run_ends_with_its_status_and_not_100(
    job: KubeflowJob, tmp_path: Path, ending: str
) -> None:
    expected = pytest.raises(RuntimeError) if ending == "crash" else contextlib.nullcontext()
    with expected, Run(tmp_path / "out", step_interval_s=0) as run:
        run.start(total_steps=10)
        run.step(3, loss=0.5)
        if ending == "crash":
            raise RuntimeError("boom")
        run.stop_for("enough steps")
    final = last_status(job)
    assert metrics_of(job.server.posts[-1])["status"] == {"stop": "interrupted", "crash": "failed"}[ending]
    assert final["progressPercentage"] == 30
    assert not [post.errors for post in job.server.posts if post.errors]


def test_only_one_process_of_a_job_reports(job: KubeflowJob, tmp_path: Path) -> None:
    """Rank 0 only, and not a process the reporting one started (a search's worker)."""
    assert not Run(tmp_path / "rank1", rank=1).reports_to_kubeflow
    worker = "from trainwire import Run; import sys; sys.exit(10 + Run(rank=0).reports_to_kubeflow)"
    with Run(tmp_path / "out") as run:
        run.start(total_steps=1)
        done = subprocess.run([sys.executable, "-c", worker], timeout=60)
    assert done.returncode == 10
    assert REPORTER_VARIABLE not in os.environ  # released at the end: a later run reports again
    assert Run(tmp_path / "later").reports_to_kubeflow


def test_the_reporting_can_be_turned_off(job: KubeflowJob, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert not Run(tmp_path / "a", kubeflow=False).reports_to_kubeflow
    monkeypatch.setenv("TRAINWIRE_KUBEFLOW", "0")
    assert not Run(tmp_path / "b").reports_to_kubeflow
    monkeypatch.delenv("KUBEFLOW_TRAINER_SERVER_TOKEN")
    monkeypatch.delenv("TRAINWIRE_KUBEFLOW")
    assert not Run(tmp_path / "c").reports_to_kubeflow  # all three variables, or none


def test_the_proxy_variables_are_honoured(job: KubeflowJob, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv("NO_PROXY", "")
    with Run(tmp_path / "through-proxy") as run:
        run.start(total_steps=1)
    assert job.server.posts == []
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with Run(tmp_path / "direct") as run:
        run.start(total_steps=1)
    assert job.server.posts


def test_a_run_outside_a_trainjob_loads_no_http_client(tmp_path: Path) -> None:
    script = (
        "import sys; from trainwire import Run; Run(None).start(total_steps=1); "
        "sys.exit(sorted({'ssl', 'urllib.request', 'trainwire.writer.kubeflow.reporter'} & set(sys.modules)) != [])"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUBEFLOW_TRAINER_SERVER_")}
    assert subprocess.run([sys.executable, "-c", script], env=env, timeout=60).returncode == 0
