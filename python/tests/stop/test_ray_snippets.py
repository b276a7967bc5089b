"""The Ray Tune and Ray Train snippets of docs/integrations.md, as printed, in one process on
one Ray cluster (Ray's imports and start paid once), stopped by `trainwire stop` and Ctrl-C:
no traceback, the exit code is the run's, and `run.finished` names the checkpoint (Ray
Train's, saved by `on_stop`) or says there is none (a Tune experiment's trials checkpoint
nothing here). SIGTERM on a Ray Train driver: integrations/ray/test_ray_train.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.paths import ROOT
from support.stopping import (
    ONE_RAY_CLUSTER,
    SLOW_RAY_TRAIN_LOSS,
    SLOW_TUNE_REPORT,
    Cell,
    assert_cells_stopped,
    assert_checkpoint_named,
    assert_no_stop_checkpoint,
    python_block,
    stopped_cells,
)
from support.stream_files import stream_of

pytestmark = pytest.mark.slow

DOCUMENT = ROOT / "docs" / "integrations.md"


def test_the_ray_snippets_end_a_stop_with_their_exit_code_and_checkpoint(tmp_path: Path) -> None:
    tune = python_block(DOCUMENT, "**Ray Tune**")
    train = python_block(DOCUMENT, "### Ray Train")
    cells = [
        Cell("tune-stop", tune, "out-tune/progress.jsonl", "control_file"),
        Cell("tune-ctrl-c", tune, "out-tune/progress.jsonl", "sigint"),
        # the driver hands Ctrl+C on to the workers as the control file (SIGTERM: test_ray_train)
        Cell("train-ctrl-c", train, "out-train/progress.jsonl", "sigint", reason="control_file"),
    ]
    ended, exits = stopped_cells(tmp_path, cells, preamble=ONE_RAY_CLUSTER + SLOW_TUNE_REPORT + SLOW_RAY_TRAIN_LOSS)
    assert_cells_stopped(tmp_path, cells, ended, exits)

    for cell in cells[:2]:
        stream = cell.stream_in(tmp_path)
        assert_no_stop_checkpoint(stream)
        lines = stream_of(stream)
        started = [line["trial"] for line in lines if line["event"] == "trial.started"]
        assert sorted(line["trial"] for line in lines if line["event"] == "trial.ended") == sorted(started)

    stream = cells[2].stream_in(tmp_path)
    named = assert_checkpoint_named(stream)  # Ctrl+C was Ray Train's abort (no run.finished); none was named
    assert sorted(path.name for path in stream.parent.glob("checkpoint-*")) == [named]  # rank 0's only
    stops = [line for line in stream_of(stream) if line["event"] == "stop.requested"]
    assert stops[0]["reason"] == "SIGINT on the Ray Train driver"
