"""Journal files read as files anyone may have written: under a cap checked before reading,
parsed with a nesting limit, the summary only when its schema accepts it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from trainwire import Run
from trainwire.contract.files import FileTooLarge, read_capped
from trainwire.contract.layout import SUMMARY_FILE, journal_dirs
from trainwire.journal.files import MAX_SUMMARY_BYTES, read_journal_json, read_summary
from trainwire.journal.lookup import journal_chain_length, latest_journal


def _summary_path(directory: Path) -> Path:
    run = Run(directory, step_interval_s=0, heartbeat_interval_s=None, objective=("loss", "min"))
    run.start(total_steps=3, config={"lr": 0.1}, provenance=False)
    run.trial_started(1, {"lr": 0.1})
    for step in range(1, 4):
        run.step(step, loss=1.0 / step, metrics={"acc": 0.5}, trial=1)
    run.trial_ended(1, "succeeded", metrics={"loss": 0.3}, best={"trial": 1, "metric": "loss", "value": 0.3})
    run.eval(3, {"loss": 0.4})
    run.finish()
    return journal_dirs(directory)[0] / SUMMARY_FILE


def test_a_file_at_its_cap_is_read_and_one_byte_over_is_absent(tmp_path: Path) -> None:
    path = tmp_path / "file"
    path.write_bytes(b"x" * 100)
    assert read_capped(path, 100) == b"x" * 100
    with pytest.raises(FileTooLarge):
        read_capped(path, 99)
    assert isinstance(FileTooLarge("x"), OSError)  # every reader's `except OSError` takes it as absent


@pytest.mark.parametrize(
    "change",
    [
        {"git_sha": 12345},
        {"status": 123},
        {"run_id": ["x"]},
        {"step": "3"},
        {"last": {"loss": "0.3"}},
        {"earlier_runs": [[["x"]]]},
        {"trials": {"count": 1, "best": {"trial": 1, "metric": "loss", "value": "x", "params": None}}},
        {"summary_version": 3},
        {"unknown": 1},
    ],
)
def test_a_summary_of_the_wrong_types_is_none(tmp_path: Path, change: dict[str, Any]) -> None:
    path = _summary_path(tmp_path)
    assert read_summary(path) == json.loads(path.read_text())  # as the writer wrote it: read
    path.write_text(json.dumps({**json.loads(path.read_text()), **change}))
    assert read_summary(path) is None
    assert journal_chain_length(path.parent) == -1


def test_deep_nesting_is_a_value_error_never_a_recursion_error(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError):
        read_journal_json(path, 1 << 20)
    assert read_summary(path) is None


def test_a_summary_over_its_cap_or_linked_out_does_not_count_in_finding_the_latest_run(tmp_path: Path) -> None:
    served = tmp_path / "served"
    first = Run(served, run_id="a-first", step_interval_s=0, heartbeat_interval_s=None)
    first.start(provenance=False)
    first.finish()
    second = Run(served, run_id="b-second", step_interval_s=0, heartbeat_interval_s=None)
    second.start(provenance=False)
    second.finish()
    latest = served / "runs" / "b-second"
    assert latest_journal(served) == latest and journal_chain_length(latest) == 1
    outside = tmp_path / "summary.json"
    outside.write_bytes((latest / SUMMARY_FILE).read_bytes())
    (latest / SUMMARY_FILE).unlink()
    (latest / SUMMARY_FILE).symlink_to(outside)
    assert journal_chain_length(latest, within=served) == -1 and journal_chain_length(latest) == 1
    os.truncate(outside, MAX_SUMMARY_BYTES + 1)
    assert journal_chain_length(latest) == -1
