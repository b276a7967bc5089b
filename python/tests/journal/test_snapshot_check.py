"""A journal snapshot is opened from only when every part is the shape its readers take: a
store checked down to each point, a state its schema accepts, lines the decoder accepts, and
no more bytes than its cap. Anything else and the stream is read instead."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support.hostile_snapshots import HOSTILE, run_with_every_marker
from support.paths import ROOT

from trainwire.contract.layout import SERIES_FILE, STREAM_FILE
from trainwire.journal.fold import SNAPSHOT_VERSION
from trainwire.journal.opening import read_snapshot
from trainwire.journal.snapshot_check import MAX_SNAPSHOT_BYTES
from trainwire.lines.view_events import MAX_VIEW_EVENTS


@pytest.mark.parametrize("change", list(HOSTILE), ids=list(HOSTILE))
def test_a_snapshot_of_the_wrong_shape_is_not_opened_from(tmp_path: Path, change: str) -> None:
    journal = run_with_every_marker(tmp_path)
    snapshot = json.loads((journal / SERIES_FILE).read_text())
    assert read_snapshot(tmp_path / STREAM_FILE, journal) == snapshot  # as the writer wrote it: opened from
    kinds = {marker["kind"] for marker in snapshot["store"]["runs"][0]["markers"]}
    assert kinds >= {"restart", "eval", "checkpoint", "stop", "finished"}  # markers of several kinds are checked
    HOSTILE[change](snapshot)
    (journal / SERIES_FILE).write_text(json.dumps(snapshot))
    assert read_snapshot(tmp_path / STREAM_FILE, journal) is None


def test_a_snapshot_over_its_cap_or_nested_past_the_parser_is_not_opened_from(tmp_path: Path) -> None:
    journal = run_with_every_marker(tmp_path)
    path = journal / SERIES_FILE
    written = path.read_bytes()
    path.write_bytes(written + b" " * (MAX_SNAPSHOT_BYTES - len(written)))  # at the cap: JSON with a trailing space
    assert read_snapshot(tmp_path / STREAM_FILE, journal) is not None
    os.truncate(path, MAX_SNAPSHOT_BYTES + 1)
    assert read_snapshot(tmp_path / STREAM_FILE, journal) is None
    path.write_text("[" * 100_000 + "]" * 100_000)
    assert read_snapshot(tmp_path / STREAM_FILE, journal) is None


def test_the_snapshot_schema_states_the_journals_version_and_event_bound() -> None:
    # the journal writes these; the schema both checkers are generated from states them again
    schema = json.loads((ROOT / "schemas" / "bundled" / "series-v1.schema.json").read_text())["properties"]
    assert schema["snapshot_version"]["const"] == SNAPSHOT_VERSION
    assert schema["events"]["maxItems"] == MAX_VIEW_EVENTS


def test_a_snapshot_whose_step_file_offset_is_no_count_is_not_opened_from(tmp_path: Path) -> None:
    journal = run_with_every_marker(tmp_path)
    snapshot = json.loads((journal / SERIES_FILE).read_text())
    snapshot["steps_offset"] = "12"
    (journal / SERIES_FILE).write_text(json.dumps(snapshot))
    assert read_snapshot(tmp_path / STREAM_FILE, journal) is None
