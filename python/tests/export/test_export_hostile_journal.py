"""What an export sends of a run's journal when others can write into it: only the journal's own
named files, each a regular file reached without a link, under its cap and not sparse, read
back from a real MLflow store and a real W&B offline run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient
from support import export_streams
from test_export_mlflow import mlflow_run
from test_export_wandb import of_type, offline_runs, records

from trainwire.cli import main
from trainwire.contract.layout import CONFIG_FILE, STEPS_FILE, run_journal_dir

SECRET = "-----BEGIN OPENSSH PRIVATE KEY-----\nnot for any tracker\n"


@pytest.fixture
def tracking_uri(shared_tracking_uri: str) -> str:
    return shared_tracking_uri


def mlflow_files(uri: str, experiment: str, run_id: str) -> dict[str, int]:
    """Every artifact of the run's MLflow run under `trainwire/`: path -> size."""
    client = MlflowClient(uri)
    found = mlflow_run(client, experiment, run_id).info.run_id
    files: dict[str, int] = {}
    pending = ["trainwire"]
    while pending:
        for item in client.list_artifacts(found, pending.pop()):
            if item.is_dir:
                pending.append(item.path)
            else:
                files[item.path] = item.file_size
    return files


def wandb_files(run_dir: Path, run_id: str) -> set[str]:
    (offline,) = offline_runs(run_dir, run_id)
    return {file.path for files in of_type(records(offline), "files") for file in files.files}


def hostile_journal(tmp_path: Path) -> tuple[Path, str]:
    """A finished run whose journal holds a link to a secret beside its files, and whose
    config is replaced by a link to it."""
    run_dir = tmp_path / "out"
    run_id = export_streams.whole_run(run_dir)
    secret = tmp_path / "id_rsa"
    secret.write_text(SECRET)
    journal = run_journal_dir(run_dir, run_id)
    (journal / "environment-extra.json").symlink_to(secret)
    (journal / "stray.txt").write_text("not the journal's")
    (journal / CONFIG_FILE).unlink()
    (journal / CONFIG_FILE).symlink_to(secret)
    return run_dir, run_id


def test_a_link_in_the_journal_is_never_sent(
    tmp_path: Path, tracking_uri: str, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir, run_id = hostile_journal(tmp_path)
    assert main(["export", "mlflow", str(run_dir), "--tracking-uri", tracking_uri, "--experiment", "links"]) == 0
    assert main(["export", "wandb", str(run_dir)]) == 0
    errors = capsys.readouterr().err
    assert errors.count(f"{CONFIG_FILE}: a link, not the journal's own file; not copied") == 2

    sent = mlflow_files(tracking_uri, "links", run_id)
    assert "trainwire/journal/notes.md" in sent and "trainwire/progress.jsonl" in sent
    assert not any(name.endswith(("environment-extra.json", "stray.txt", CONFIG_FILE)) for name in sent)
    saved = wandb_files(run_dir, run_id)
    assert "trainwire/notes.md" in saved
    assert not any(name.endswith(("environment-extra.json", "stray.txt", CONFIG_FILE)) for name in saved)
    (offline,) = offline_runs(run_dir, run_id)
    assert not any(SECRET in path.read_text(errors="replace") for path in offline.rglob("*") if path.is_file())


def test_a_sparse_step_file_is_refused_in_one_line(
    tmp_path: Path, tracking_uri: str, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = export_streams.readme_run(tmp_path)
    steps = run_journal_dir(tmp_path, run_id) / STEPS_FILE
    with steps.open("r+b") as file:  # its records, then a hole of 256 MiB
        file.truncate(256 << 20)
    assert os.stat(steps).st_blocks * 512 < 1 << 20  # the file system keeps holes
    assert main(["export", "mlflow", str(tmp_path), "--tracking-uri", tracking_uri, "--experiment", "sparse"]) == 0
    assert main(["export", "wandb", str(tmp_path)]) == 0
    errors = capsys.readouterr().err
    assert errors.count(f"{steps}: a sparse file ({256 << 20} bytes") == 2

    sent = mlflow_files(tracking_uri, "sparse", run_id)
    assert "trainwire/journal/summary.json" in sent and f"trainwire/journal/{STEPS_FILE}" not in sent
    assert max(sent.values()) < 1 << 20
    assert f"trainwire/{STEPS_FILE}" not in wandb_files(tmp_path, run_id)
    (offline,) = offline_runs(tmp_path, run_id)
    assert sum(path.stat().st_size for path in offline.rglob("*") if path.is_file()) < 1 << 20


def test_the_stream_and_step_file_are_copied_up_to_the_cap(
    tmp_path: Path, tracking_uri: str, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = export_streams.readme_run(tmp_path)
    stream = tmp_path / "progress.jsonl"
    steps = run_journal_dir(tmp_path, run_id) / STEPS_FILE
    cap = min(stream.stat().st_size, steps.stat().st_size) - 1
    uri, experiment = ["--tracking-uri", tracking_uri], ["--experiment", "capped"]
    assert main(["export", "mlflow", str(tmp_path), *uri, *experiment, "--max-copy-bytes", str(cap)]) == 0
    errors = capsys.readouterr().err
    assert f"{stream}: {stream.stat().st_size} bytes, over the {cap} an export copies; not copied" in errors
    assert f"{steps}: {steps.stat().st_size} bytes, over the {cap} an export copies; not copied" in errors
    sent = mlflow_files(tracking_uri, "capped", run_id)
    assert "trainwire/progress.jsonl" not in sent and f"trainwire/journal/{STEPS_FILE}" not in sent
    assert "trainwire/journal/summary.json" in sent  # the rest is sent; the metrics too
    client = MlflowClient(tracking_uri)
    history = client.get_metric_history(mlflow_run(client, "capped", run_id).info.run_id, "train/loss")
    assert len(history) == 100

    # a size with its unit; the default sends both
    assert main(["export", "mlflow", str(tmp_path), *uri, "--experiment", "unit", "--max-copy-bytes", "1M"]) == 0
    sent = mlflow_files(tracking_uri, "unit", run_id)
    assert sent["trainwire/progress.jsonl"] == stream.stat().st_size
    assert sent[f"trainwire/journal/{STEPS_FILE}"] == steps.stat().st_size


def test_a_fifo_in_place_of_the_cursor_is_refused_not_waited_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export_streams.whole_run(tmp_path / "out")
    cursor = tmp_path / "cursor.json"
    os.mkfifo(cursor)
    arguments = ["export", "tensorboard", str(tmp_path / "out"), "--logdir", str(tmp_path / "tb")]
    assert main([*arguments, "--cursor", str(cursor)]) != 0
    assert f"{cursor}: unreadable export cursor ({cursor}: not a regular file)" in capsys.readouterr().err
