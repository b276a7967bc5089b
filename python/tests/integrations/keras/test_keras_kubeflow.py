"""A Keras fit inside a Kubeflow TrainJob posts valid statuses, ending at 100 with its loss."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("KERAS_BACKEND", "torch")  # before keras is imported

from support.example_scripts import load_example
from support.kubeflow_server import KubeflowJob, job_in_environment

from trainwire.integrations.keras import attach

example = load_example("keras_train")


@pytest.fixture
def job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[KubeflowJob]:
    made = job_in_environment(tmp_path, monkeypatch)
    yield made
    made.close()


def test_a_fit_posts_valid_statuses_ending_at_100(job: KubeflowJob, tmp_path: Path) -> None:
    model = example.tiny_model()
    attach(model, output_dir=tmp_path / "out", heartbeat_interval_s=None)
    inputs, targets = example.data()
    model.fit(inputs, targets, batch_size=8, epochs=2, validation_data=example.data(16, seed=1), verbose=0)
    posts = job.server.posts
    assert len(posts) >= 2 and all(post.answered == 200 for post in posts)
    final = posts[-1].body["trainerStatus"]
    names = {metric["name"] for metric in final["metrics"]}
    assert final["progressPercentage"] == 100 and {"loss", "status", "epoch", "total_epochs"} <= names
