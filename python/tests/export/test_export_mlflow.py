"""`trainwire export mlflow` against a real MLflow SQLite store, read back with MLflow's client."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient
from support import export_streams

from trainwire.cli import main
from trainwire.contract.clock import parse_timestamp_us
from trainwire.contract.layout import run_journal_dir
from trainwire.export.mlflow import MAX_ENTITY_KEY_LENGTH, RUN_ID_TAG, default_artifact_location, mlflow_key


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The directory of the module's store; the exports run from another directory, where
    MLflow alone would put a SQLite store's artifacts (`./mlruns`)."""
    # one store for the module: creating its tables takes MLflow several seconds
    home = tmp_path_factory.mktemp("mlflow")
    elsewhere = tmp_path_factory.mktemp("cwd")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(elsewhere)
        yield home
    assert not (elsewhere / "mlruns").exists()


@pytest.fixture(scope="module")
def tracking_uri(store: Path) -> str:
    return f"sqlite:///{store / 'store.db'}"


def export(run_dir: Path, uri: str, experiment: str, *more: str) -> int:
    return main(["export", "mlflow", str(run_dir), "--tracking-uri", uri, "--experiment", experiment, *more])


def mlflow_run(client: MlflowClient, experiment: str, trainwire_id: str):  # noqa: ANN201 - an MLflow Run
    experiment_id = client.get_experiment_by_name(experiment).experiment_id
    runs = client.search_runs([experiment_id], filter_string=f"tags.`{RUN_ID_TAG}` = '{trainwire_id}'")
    assert len(runs) == 1
    return runs[0]


def history(client: MlflowClient, run_id: str, key: str) -> list[tuple[int, float]]:
    """(step, value), sorted: MLflow's order is not the order of logging."""
    return sorted((metric.step, metric.value) for metric in client.get_metric_history(run_id, key))


def test_a_finished_run_arrives_whole(tmp_path: Path, store: Path, tracking_uri: str) -> None:
    trainwire_id = export_streams.whole_run(tmp_path)
    assert export(tmp_path, tracking_uri, "whole") == 0

    client = MlflowClient(tracking_uri)
    run = mlflow_run(client, "whole", trainwire_id)
    params = run.data.params
    assert params["optimizer.name"] == "adamw" and params["optimizer.lr"] == "0.001"
    assert params["optimizer.betas"] == "[0.9, 0.999]"
    assert params["batch size _per device_"] == "8"
    assert params["api_token"] == "<redacted>"
    long_key = mlflow_key("x" * 300)
    assert len(long_key) == MAX_ENTITY_KEY_LENGTH and params[long_key] == "a long name"
    assert params["notes"] == "n" * 6000  # cut to MLflow's longest value
    tags = run.data.tags
    assert tags["mlflow.source.git.commit"] == export_streams.PROVENANCE["git_sha"]
    assert tags["trainwire.provenance.packages.torch"] == "2.13.0"
    assert tags["trainwire.provenance.seed"] == "7"
    assert (tags["trainwire.status"], tags["trainwire.reason"], tags["trainwire.exit_code"]) == (
        "interrupted",
        "control_file",
        "2",
    )
    assert tags["trainwire.attempt"] == "2"
    assert run.info.status == "KILLED"

    losses = history(client, run.info.run_id, "train/loss")
    assert losses == sorted([(1, 1.0), (2, 0.5), (3, 1 / 3), (4, 0.25), (3, 10 / 3), (4, 2.5), (5, 2.0), (6, 10 / 6)])
    assert history(client, run.info.run_id, "eval/loss") == [(2, 0.7), (6, 0.4)]
    assert history(client, run.info.run_id, "train/accuracy") == [(1, 0.1), (2, 0.2), (3, 0.3), (4, 0.4)]
    lines = [line for line in (tmp_path / "progress.jsonl").read_text().splitlines() if '"train.step"' in line]
    first = next(m for m in client.get_metric_history(run.info.run_id, "train/loss") if m.step == 1)
    assert first.timestamp == parse_timestamp_us(lines[0].split('"ts":"')[1].split('"')[0]) // 1000
    artifacts = [item.path for item in client.list_artifacts(run.info.run_id, "trainwire")]
    assert artifacts == ["trainwire/journal", "trainwire/progress.jsonl"]
    journal = [item.path for item in client.list_artifacts(run.info.run_id, "trainwire/journal")]
    own = sorted(path.name for path in run_journal_dir(tmp_path, trainwire_id).iterdir() if path.is_file())
    assert journal == [f"trainwire/journal/{name}" for name in own]
    assert {"config.json", "notes.md", "summary.json"} <= set(own)  # every file of the run's journal
    # beside the store, not in the current directory
    assert (store / "mlartifacts").is_dir() and run.info.artifact_uri.startswith((store / "mlartifacts").as_uri())

    assert history(client, run.info.run_id, "epoch/loss") == [(6, 0.4)]
    assert history(client, run.info.run_id, "final/loss") == [(6, 1.5)]
    assert tags["mlflow.note.content"] == export_streams.NOTES
    assert tags["trainwire.checkpoint.6"] == '{"path": "checkpoint-6", "reason": "periodic"}'


def test_the_runs_own_journal_comes_before_the_directorys(tmp_path: Path, tracking_uri: str) -> None:
    run = export_streams.start(tmp_path)
    (tmp_path / "notes.md").write_text("a 0.1 journal's notes, about the directory\n")
    own = run_journal_dir(tmp_path, run.run_id)
    (own / "notes.md").write_text("this run's own notes\n")
    run.phase_ended("train")
    run.finish("succeeded")
    assert export(tmp_path, tracking_uri, "own") == 0
    client = MlflowClient(tracking_uri)
    exported = mlflow_run(client, "own", run.run_id)
    assert exported.data.tags["mlflow.note.content"] == "this run's own notes"
    journal = [item.path for item in client.list_artifacts(exported.info.run_id, "trainwire/journal")]
    assert "trainwire/journal/notes.md" in journal and all(path.startswith("trainwire/journal/") for path in journal)


def test_the_artifact_location_is_beside_a_local_store_or_the_stores_own(tmp_path: Path) -> None:
    assert default_artifact_location(f"sqlite:///{tmp_path}/a/m.db") == (tmp_path / "a" / "mlartifacts").as_uri()
    assert default_artifact_location("sqlite:///m.db") == (Path.cwd() / "mlartifacts").as_uri()
    for uri in ("http://localhost:5000", "file:///tmp/mlruns", "/tmp/mlruns", "databricks"):
        assert default_artifact_location(uri) is None
    with pytest.raises(ValueError, match="give one"):
        default_artifact_location("postgresql://db/mlflow")


def test_a_store_mlflow_refuses_is_one_line_naming_it_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    export_streams.whole_run(tmp_path)
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)  # MLflow 3 refuses a file store without it
    uri = (tmp_path / "mlruns").as_uri()
    assert export(tmp_path, uri, "refused") == 1
    error = capsys.readouterr().err
    assert f"the tracking store {uri} cannot be opened: " in error
    assert "MLFLOW_ALLOW_FILE_STORE" in error and "Traceback" not in error


def test_exporting_again_adds_only_what_is_new(tmp_path: Path, tracking_uri: str) -> None:
    run = export_streams.start(tmp_path)
    export_streams.first_attempt(run)
    assert export(tmp_path, tracking_uri, "again") == 0
    assert export(tmp_path, tracking_uri, "again") == 0  # nothing new: nothing written twice
    client = MlflowClient(tracking_uri)
    exported = mlflow_run(client, "again", run.run_id)
    assert exported.info.status == "RUNNING"
    assert [step for step, _ in history(client, exported.info.run_id, "train/loss")] == [1, 2, 3, 4]

    export_streams.second_attempt(run)
    export_streams.end_interrupted(run)
    assert export(tmp_path, tracking_uri, "again") == 0
    assert export(tmp_path, tracking_uri, "again") == 0
    exported = mlflow_run(client, "again", run.run_id)
    assert [step for step, _ in history(client, exported.info.run_id, "train/loss")] == [1, 2, 3, 3, 4, 4, 5, 6]
    assert exported.info.status == "KILLED"


def test_follow_keeps_up_with_a_live_run_and_returns_when_it_ends(tmp_path: Path, tracking_uri: str) -> None:
    run = export_streams.start(tmp_path, total_steps=30)
    exit_codes: list[int] = []
    follower = threading.Thread(
        target=lambda: exit_codes.append(export(tmp_path, tracking_uri, "live", "--follow", "--poll", "0.05"))
    )
    follower.start()
    client = MlflowClient(tracking_uri)
    for step in range(1, 31):
        run.step(step, loss=1.0 / step)
        if step == 10:
            # the export is live: step 10 reaches MLflow while the run goes on
            deadline = time.monotonic() + 60
            while not _has_step(client, run.run_id, 10):
                assert time.monotonic() < deadline and follower.is_alive()
                time.sleep(0.05)
    run.phase_ended("train")
    run.finish("succeeded")
    follower.join(timeout=120)
    assert not follower.is_alive() and exit_codes == [0]
    exported = mlflow_run(client, "live", run.run_id)
    assert [step for step, _ in history(client, exported.info.run_id, "train/loss")] == list(range(1, 31))
    assert exported.info.status == "FINISHED"


def _has_step(client: MlflowClient, trainwire_id: str, step: int) -> bool:
    experiment = client.get_experiment_by_name("live")
    if experiment is None:
        return False
    runs = client.search_runs([experiment.experiment_id], filter_string=f"tags.`{RUN_ID_TAG}` = '{trainwire_id}'")
    return bool(runs) and any(s == step for s, _ in history(client, runs[0].info.run_id, "train/loss"))


def test_names_follow_mlflows_rules() -> None:
    assert mlflow_key("model/lr (head)") == "model/lr _head_"
    assert mlflow_key("//a//b") == "a/b"
    assert mlflow_key("é") == "_"
    cut = {mlflow_key("k" * 300 + "1"), mlflow_key("k" * 300 + "2")}
    assert len(cut) == 2 and all(len(key) == MAX_ENTITY_KEY_LENGTH for key in cut)


def test_a_searchs_trials_are_child_runs_with_their_params_and_metrics(tmp_path: Path, tracking_uri: str) -> None:
    trainwire_id = export_streams.search_run(tmp_path)
    assert export(tmp_path, tracking_uri, "search") == 0

    client = MlflowClient(tracking_uri)
    parent = mlflow_run(client, "search", trainwire_id)
    experiment_id = client.get_experiment_by_name("search").experiment_id
    children = client.search_runs([experiment_id], filter_string=f"tags.`mlflow.parentRunId` = '{parent.info.run_id}'")
    by_trial = {int(child.data.tags["trainwire.trial"]): child for child in children}
    assert sorted(by_trial) == [1, 2]
    assert [by_trial[n].data.tags["mlflow.runName"] for n in (1, 2)] == ["trial 1", "trial 2"]
    assert by_trial[1].data.params == {"lr": "0.01", "optimizer": "sgd"}
    assert by_trial[2].data.params == {"lr": "0.1", "optimizer": "adam"}
    assert history(client, by_trial[1].info.run_id, "train/loss") == [(1, 1.0), (2, 0.5)]
    assert history(client, by_trial[1].info.run_id, "eval/loss") == [(2, 0.4)]
    assert history(client, by_trial[1].info.run_id, "trial/objective") == [(0, 0.4)]
    assert history(client, by_trial[2].info.run_id, "train/loss") == [(1, 2.0)]
    assert client.get_metric_history(by_trial[2].info.run_id, "trial/objective") == []  # null: left out
    assert [(by_trial[n].info.status, by_trial[n].data.tags["trainwire.status"]) for n in (1, 2)] == [
        ("FINISHED", "succeeded"),
        ("KILLED", "pruned"),
    ]
    assert client.get_metric_history(parent.info.run_id, "train/loss") == []  # the trials' steps are theirs
    assert parent.info.status == "FINISHED"


def test_every_logged_step_arrives_once_the_throttled_ones_too(tmp_path: Path, tracking_uri: str) -> None:
    trainwire_id = export_streams.readme_run(tmp_path)
    assert export(tmp_path, tracking_uri, "every-step") == 0
    assert export(tmp_path, tracking_uri, "every-step") == 0  # nothing new: nothing twice
    client = MlflowClient(tracking_uri)
    run = mlflow_run(client, "every-step", trainwire_id)
    losses = [(step, round(value, 6)) for step, value in history(client, run.info.run_id, "train/loss")]
    assert losses == export_streams.README_LOSSES
    assert run.info.status == "FINISHED"


def test_a_runs_name_is_its_mlflow_run_name_and_its_tags_are_tags(tmp_path: Path, tracking_uri: str) -> None:
    trainwire_id = export_streams.search_run(tmp_path)
    assert export(tmp_path, tracking_uri, "named") == 0
    client = MlflowClient(tracking_uri)
    tags = mlflow_run(client, "named", trainwire_id).data.tags
    assert (tags["mlflow.runName"], tags["trainwire.tags"]) == (export_streams.SEARCH_NAME, "baseline, fp16")
    experiment_id = client.get_experiment_by_name("named").experiment_id
    tagged = client.search_runs([experiment_id], filter_string="tags.`trainwire.tag.fp16` = 'true'")
    assert [run.data.tags[RUN_ID_TAG] for run in tagged] == [trainwire_id]
