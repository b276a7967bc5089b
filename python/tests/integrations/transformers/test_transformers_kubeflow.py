"""A transformers `Trainer` inside a Kubeflow TrainJob: trainwire's reporter posts valid
statuses, and transformers' own `KubeflowCallback` stands down so the job has one reporter
(it stays when trainwire's reporting is turned off)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from support.kubeflow_server import KubeflowJob, Post, job_in_environment
from support.trainer_streams import plain_trainer

from trainwire.integrations.transformers import attach

torch.set_num_threads(1)  # a model this small only contends for the shared cores


@pytest.fixture
def job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[KubeflowJob]:
    made = job_in_environment(tmp_path, monkeypatch)
    yield made
    made.close()


def names(post: Post) -> set[str]:
    return {metric["name"] for metric in post.body["trainerStatus"].get("metrics", [])}


def test_a_trainer_reports_through_trainwire_alone(job: KubeflowJob, tmp_path: Path) -> None:
    trainer = plain_trainer(tmp_path / "out", report_to=["kubeflow"], max_steps=6, logging_steps=2)
    assert any(type(cb).__name__ == "KubeflowCallback" for cb in trainer.callback_handler.callbacks)
    attach(trainer)
    trainer.train()
    posts = job.server.posts
    assert len(posts) >= 2 and not [post.errors for post in posts if post.errors]
    assert all("status" in names(post) and "current_step" not in names(post) for post in posts)  # trainwire's only
    final = posts[-1].body["trainerStatus"]
    assert final["progressPercentage"] == 100 and {"loss", "learning_rate", "epoch"} <= names(posts[-1])


def test_transformers_callback_stays_when_trainwire_does_not_report(job: KubeflowJob, tmp_path: Path) -> None:
    trainer = plain_trainer(tmp_path / "out", report_to=["kubeflow"], max_steps=2)
    attach(trainer, kubeflow=False)
    trainer.train()
    assert job.server.posts and all("current_step" in names(p) or "status" not in names(p) for p in job.server.posts)


def test_a_search_reports_its_trials_through_trainwire_alone(job: KubeflowJob, tmp_path: Path) -> None:
    import optuna

    from trainwire.cli.demo_model import build_model, build_trainer

    optuna.logging.set_verbosity(optuna.logging.ERROR)

    trainer = build_trainer(tmp_path, max_steps=2, eval_strategy="steps", eval_steps=2, report_to=["kubeflow"])
    trainer.model_init = lambda trial=None: build_model()
    attach(trainer, check_interval_s=0)
    trainer.hyperparameter_search(
        hp_space=lambda trial: {"learning_rate": trial.suggest_float("learning_rate", 1e-4, 1e-2, log=True)},
        n_trials=2,
        direction="minimize",
        backend="optuna",
    )
    posts = job.server.posts
    assert posts and not [post.errors for post in posts if post.errors]
    assert all("status" in names(post) and "current_step" not in names(post) for post in posts)
    final = {metric["name"]: metric["value"] for metric in posts[-1].body["trainerStatus"]["metrics"]}
    assert posts[-1].body["trainerStatus"]["progressPercentage"] == 100
    assert final["trials_done"] == "2" and final["trials_total"] == "2" and "best_objective" in final
