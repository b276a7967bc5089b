"""A run's name and tags reach every tracker whatever the contract lets them be, and a journal
summary anyone may have written cannot hand a tracker what the contract refuses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from mlflow.tracking import MlflowClient
from test_export_mlflow import mlflow_run
from test_export_tensorboard import accumulated
from test_export_wandb import of_type, offline_runs, records

from trainwire import Run
from trainwire.cli import main
from trainwire.contract.known_event_dicts import event_field_schema
from trainwire.contract.layout import SUMMARY_FILE, run_journal_dir
from trainwire.export.mlflow import mlflow_key
from trainwire.export.scalars import safe_name

NAME_SCHEMA = event_field_schema("run.started", "name")
TAG_SCHEMA = event_field_schema("run.started", "tags")["items_schema"]


@pytest.fixture
def tracking_uri(shared_tracking_uri: str) -> str:
    return shared_tracking_uri


def started(output_dir: Path, name: str | None, tags: list[str]) -> Run:
    run = Run(output_dir, step_interval_s=0, heartbeat_interval_s=None, name=name, tags=tags)
    run.start(total_steps=3, config={"lr": 0.1}, provenance=False)
    run.step(1, loss=1.0)
    return run


def wandb_run_records(run_dir: Path, run_id: str) -> list[object]:
    """The `run` records of each offline part of the run, in order."""
    return [of_type(records(part), "run")[0] for part in offline_runs(run_dir, run_id)]


def test_a_dot_dot_tag_reaches_mlflow_in_one_run(tmp_path: Path, tracking_uri: str) -> None:
    tags = ["a/../b", "./x", "y/.", "..", "/lead"]
    run = started(tmp_path, "dots", tags)
    run.finish("succeeded")
    assert main(["export", "mlflow", str(tmp_path), "--tracking-uri", tracking_uri, "--experiment", "dots"]) == 0
    assert main(["export", "mlflow", str(tmp_path), "--tracking-uri", tracking_uri, "--experiment", "dots"]) == 0
    found = mlflow_run(MlflowClient(tracking_uri), "dots", run.run_id)  # one MLflow run, no empty second
    assert found.info.status == "FINISHED"
    assert found.data.tags["trainwire.tags"] == ", ".join(tags)
    assert {mlflow_key(f"trainwire.tag.{tag}") for tag in tags} <= set(found.data.tags)
    assert mlflow_key("trainwire.tag.a/../b") == "trainwire.tag.a/__/b"


def test_a_resumed_wandb_export_takes_from_the_summary_only_what_the_contract_allows(tmp_path: Path) -> None:
    run = started(tmp_path, "first name", ["keep"])
    assert main(["export", "wandb", str(tmp_path)]) == 0
    summary_path = run_journal_dir(tmp_path, run.run_id) / SUMMARY_FILE
    summary = json.loads(summary_path.read_text())
    summary["name"] = "\x1b[2J" + "n" * 1_000_000  # a control character, and far over 256
    summary["tags"] = ["t" * 65, "fine", "\x07bell"]
    summary_path.write_text(json.dumps(summary))
    run.step(2, loss=0.5)
    assert main(["export", "wandb", str(tmp_path)]) == 0  # a later part: the name and tags from the summary

    first, second = wandb_run_records(tmp_path, run.run_id)
    assert (first.display_name, list(first.tags)) == ("first name", ["keep"])
    assert (second.display_name, list(second.tags)) == (run.run_id, ["fine"])


def test_a_sparse_summary_costs_a_resumed_wandb_export_nothing(tmp_path: Path) -> None:
    run = started(tmp_path, "sparse", ["keep"])
    assert main(["export", "wandb", str(tmp_path)]) == 0
    summary_path = run_journal_dir(tmp_path, run.run_id) / SUMMARY_FILE
    with summary_path.open("r+b") as file:
        file.truncate(768 << 20)  # a summary of 768 MiB, nearly all holes
    run.step(2, loss=0.5)
    code = (
        # this process's own peak (VmHWM, since its exec): ru_maxrss would count the forking test runner's
        "import sys; from trainwire.cli import main; code = main(sys.argv[1:]); "
        "print(next(line.split()[1] for line in open('/proc/self/status') if line.startswith('VmHWM:'))); "
        "sys.exit(code)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, "export", "wandb", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ,
    )
    assert done.returncode == 0, done.stderr
    peak_mib = int(done.stdout.split()[-1]) / 1024  # Linux counts KiB
    assert peak_mib < 512, f"{peak_mib:.0f} MiB"
    assert "over the 1048576 bytes it may hold: read as absent" in done.stderr
    _, second = wandb_run_records(tmp_path, run.run_id)
    assert second.display_name == run.run_id


def printable(schema: dict[str, object]) -> st.SearchStrategy[str]:
    """Strings the schema's pattern and lengths accept (no lone surrogates: not text)."""
    alphabet = st.characters(blacklist_categories=("Cs",))
    return st.from_regex(str(schema["pattern"]), fullmatch=True, alphabet=alphabet).filter(
        lambda text: int(schema["min_length"]) <= len(text) <= int(schema["max_length"])  # type: ignore[call-overload]
    )


namings = st.tuples(
    st.one_of(st.none(), printable(NAME_SCHEMA)),
    st.lists(printable(TAG_SCHEMA), max_size=int(event_field_schema("run.started", "tags")["max_length"]), unique=True),
)


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(namings, min_size=2, max_size=2))
@example([("a\u00a0name", ["a/../b", "t" * 64]), (None, ["./.", "\u2028"])])
def test_any_name_and_tags_the_contract_allows_reach_every_tracker(
    tmp_path_factory: pytest.TempPathFactory, tracking_uri: str, drawn: list[tuple[str | None, list[str]]]
) -> None:
    output = tmp_path_factory.mktemp("named")
    runs = []
    for name, tags in drawn:  # two runs of one stream, the second resuming the first
        run = started(output, name, tags)
        run.finish("succeeded")
        runs.append(run.run_id)
    uri = ["--tracking-uri", tracking_uri, "--experiment", output.name]
    assert main(["export", "mlflow", str(output), *uri]) == 0
    assert main(["export", "tensorboard", str(output), "--logdir", str(output / "tb")]) == 0
    assert main(["export", "wandb", str(output)]) == 0

    client = MlflowClient(tracking_uri)
    for run_id, (name, tags) in zip(runs, drawn, strict=True):
        found = mlflow_run(client, output.name, run_id)
        assert found.data.tags["mlflow.runName"] == (name or run_id)
        assert found.data.tags.get("trainwire.tags", "") == ", ".join(tags)[:8000]
        (record,) = wandb_run_records(output, run_id)
        assert (record.display_name, list(record.tags)) == (name or run_id, tags)
        board = accumulated(output / "tb", run_id)
        if name is not None or tags:
            (text,) = board.Tensors("name")
            assert (name or "") in text.tensor_proto.string_val[0].decode()
        assert safe_name(run_id) in {path.name for path in (output / "tb").iterdir()}
