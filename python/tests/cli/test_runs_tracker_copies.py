"""`trainwire runs` and `trainwire serve` over a directory that also holds an MLflow store: the
copy of the stream that `trainwire export mlflow` logged as an artifact is not a second run."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support import export_streams
from support.cli_process import trainwire
from support.serve_process import serve

from trainwire.contract.layout import STREAM_FILE


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A directory holding a run and a real MLflow file store it was exported to, twice: into
    the store's own `mlruns/` and into an artifact location of another name."""
    home = tmp_path_factory.mktemp("home")
    run_id = export_streams.whole_run(home / "run")
    store = f"file://{home / 'mlruns'}"
    os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"  # MLflow 3 keeps the file store behind this switch
    try:
        for experiment, location in (("own", []), ("elsewhere", ["--artifact-location", str(home / "exports")])):
            done = trainwire(
                "export", "mlflow", str(home / "run"), "--tracking-uri", store, "--experiment", experiment, *location
            )
            assert done.returncode == 0, done.stderr
    finally:
        del os.environ["MLFLOW_ALLOW_FILE_STORE"]
    copies = sorted(home.rglob(f"artifacts/trainwire/{STREAM_FILE}"))
    assert [copy.relative_to(home).parts[0] for copy in copies] == ["exports", "mlruns"]  # the copies are there
    return home, run_id


def test_runs_lists_the_run_once(exported: tuple[Path, str]) -> None:
    home, run_id = exported
    listed = trainwire("runs", str(home), "--json")
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)
    assert [(row["run_id"], Path(row["directory"]).name) for row in rows] == [(run_id, "run")]
    # a copy named explicitly is read: the rule is for what a walk finds below its root
    copy = next(home.glob(f"mlruns/*/*/artifacts/trainwire/{STREAM_FILE}"))
    explicit = trainwire("runs", str(copy.parent.parent), "--json")
    assert [row["run_id"] for row in json.loads(explicit.stdout)] == [run_id]


def test_serve_indexes_the_run_once(exported: tuple[Path, str]) -> None:
    home, _ = exported
    with serve(str(home)) as server:
        rows = server.rows()
    assert [row["key"] for row in rows] == ["run"]
