"""A run's name and tags (`Run(name=, tags=)`, `run.started` 1.1): written as given, bad
ones dropped with one warning (writer rule 3) or refused in a strict run, and read back by
the summary, `trainwire runs` and `diff`."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from support.cli_process import trainwire
from support.stream_files import stream_of

from trainwire.writer.checks import RejectedInput
from trainwire.writer.run import Run


def finished_run(directory: Path, **options: object) -> Run:
    run = Run(directory, heartbeat_interval_s=None, **options)  # type: ignore[arg-type]
    run.start(provenance=False)
    run.step(1, loss=0.5)
    run.finish("succeeded")
    return run


def test_a_name_and_tags_round_trip_to_the_stream_the_summary_and_the_runs_table(tmp_path: Path) -> None:
    run = finished_run(tmp_path / "a", name="bert-base lr sweep", tags=["baseline", "fp16", "baseline"])
    started = stream_of(tmp_path / "a" / "progress.jsonl")[0]
    assert (started["name"], started["tags"]) == ("bert-base lr sweep", ["baseline", "fp16"])
    summary = json.loads((tmp_path / "a" / "runs" / run.run_id / "summary.json").read_text())
    assert (summary["name"], summary["tags"]) == ("bert-base lr sweep", ["baseline", "fp16"])
    listed = trainwire("runs", str(tmp_path))
    assert listed.returncode == 0, listed.stderr
    header, row = listed.stdout.splitlines()[1:3]
    assert header.split()[:2] == ["run_id", "name"]
    assert "bert-base lr sweep [baseline, fp16]" in row
    rows = json.loads(trainwire("runs", str(tmp_path), "--json").stdout)
    assert [(row["name"], row["tags"]) for row in rows] == [("bert-base lr sweep", ["baseline", "fp16"])]


def test_a_run_without_a_name_has_none_in_the_summary_and_a_dash_in_the_table(tmp_path: Path) -> None:
    run = finished_run(tmp_path)
    assert "name" not in stream_of(tmp_path / "progress.jsonl")[0]
    summary = json.loads((tmp_path / "runs" / run.run_id / "summary.json").read_text())
    assert (summary["name"], summary["tags"]) == (None, [])
    row = trainwire("runs", str(tmp_path)).stdout.splitlines()[2]
    assert row.split()[:2] == [run.run_id, "-"]


def test_a_name_or_tag_the_contract_cannot_take_is_dropped_with_one_warning_and_the_rest_written(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="trainwire.writer")
    finished_run(tmp_path, name="x" * 257, tags=["ok", "bad\x1b[31m", 7, "", *[f"t{n}" for n in range(40)]])
    started = stream_of(tmp_path / "progress.jsonl")[0]
    assert "name" not in started
    assert started["tags"] == ["ok", *[f"t{n}" for n in range(31)]]
    messages = [record.getMessage() for record in caplog.records]
    assert sum("name" in message and "left out" in message for message in messages) == 1
    assert any("at most 32" in message for message in messages)


def test_one_string_is_one_tag_and_start_may_name_a_run_made_without_a_name(tmp_path: Path) -> None:
    run = Run(tmp_path, heartbeat_interval_s=None, tags="baseline")
    run.start(provenance=False, name="from init_trackers")
    run.finish("succeeded")
    started = stream_of(tmp_path / "progress.jsonl")[0]
    assert (started["name"], started["tags"]) == ("from init_trackers", ["baseline"])
    assert (run.name, run.tags) == ("from init_trackers", ["baseline"])


def test_a_strict_run_refuses_a_bad_name(tmp_path: Path) -> None:
    with pytest.raises(RejectedInput, match="printable"):
        Run(tmp_path, strict=True, name="two\nlines")
