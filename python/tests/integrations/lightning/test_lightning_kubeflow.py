"""A Lightning fit inside a Kubeflow TrainJob posts valid statuses, ending at 100 with its loss
and its validation's metrics."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.example_scripts import load_example
from support.kubeflow_server import KubeflowJob, job_in_environment

from trainwire.integrations.lightning import TrainwireCallback

example = load_example("lightning_train")


@pytest.fixture
def job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[KubeflowJob]:
    made = job_in_environment(tmp_path, monkeypatch)
    yield made
    made.close()


def test_a_fit_posts_valid_statuses_ending_at_100(job: KubeflowJob, tmp_path: Path) -> None:
    callback = TrainwireCallback(heartbeat_interval_s=None)
    trainer = example.trainer_for(str(tmp_path / "out"), 8, callback, callbacks=[callback], val_check_interval=4)
    trainer.fit(example.TinyRegression(), example.loader(), example.loader(16, seed=1))
    posts = job.server.posts
    assert len(posts) >= 2 and all(post.answered == 200 for post in posts)
    final = posts[-1].body["trainerStatus"]
    names = {metric["name"] for metric in final["metrics"]}
    assert final["progressPercentage"] == 100 and {"loss", "status", "step", "total_steps"} <= names
    assert any(name.startswith("val") for name in names), names
