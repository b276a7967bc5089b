"""The server's snapshot check (`journal.snapshot_check`) and the page's `checkOpening`
(`dashboard/opening.ts`) refuse the same hostile parts: a snapshot the server would not open
from gives an opening the page would not take either, had the server sent it."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from support.hostile_snapshots import HOSTILE, SPELLED_OTHERWISE, run_with_every_marker
from support.typescript_side import typescript_lines

from trainwire.contract.layout import SERIES_FILE, STREAM_FILE
from trainwire.journal.opening import open_from_snapshots
from trainwire.serve.app import opening_answer


def _with_snapshot_parts(answer: dict[str, Any], snapshot: dict[str, Any]) -> dict[str, Any]:
    """The opening of a run that ended (no tail past its snapshot) built from `snapshot` as it is."""
    changed = copy.deepcopy(answer)
    changed["series"] = snapshot["store"]
    changed["state"]["runs"] = [snapshot["state"]]
    changed["events"] = snapshot["events"]
    return changed


def _answers(tmp_path: Path, changes: list[Any]) -> tuple[list[bool], list[dict[str, Any]]]:
    """Whether the server opens from each changed snapshot, and the opening each gives the page."""
    server: list[bool] = []
    answers: list[dict[str, Any]] = []
    for number, change in enumerate(changes):
        directory = tmp_path / str(number)
        journal = run_with_every_marker(directory)
        opened = open_from_snapshots(directory / STREAM_FILE)
        assert opened is not None
        answer = opening_answer(opened)
        snapshot = json.loads((journal / SERIES_FILE).read_text())
        assert _with_snapshot_parts(answer, snapshot) == json.loads(json.dumps(answer))  # as written: the same parts
        if change is not None:
            change(snapshot)
        (journal / SERIES_FILE).write_text(json.dumps(snapshot))
        server.append(open_from_snapshots(directory / STREAM_FILE) is not None)
        answers.append(_with_snapshot_parts(answer, snapshot))
    return server, answers


def test_the_server_and_the_page_refuse_the_same_hostile_snapshots(tmp_path: Path) -> None:
    server, answers = _answers(tmp_path, [None, *HOSTILE.values()])
    page = [json.loads(line) for line in typescript_lines("check-opening.js", answers)]
    expected = [True] + [False] * len(HOSTILE)
    assert dict(zip(["as written", *HOSTILE], server, strict=True)) == dict(
        zip(["as written", *HOSTILE], expected, strict=True)
    )
    assert dict(zip(["as written", *HOSTILE], page, strict=True)) == dict(
        zip(["as written", *HOSTILE], expected, strict=True)
    )


def test_the_server_and_the_page_open_from_the_same_snapshots_spelled_otherwise(tmp_path: Path) -> None:
    # both check the store by validators generated from one schema: a count spelled `2.0` is 2
    # in both (the page cannot tell them apart; the server refused it once)
    server, answers = _answers(tmp_path, list(SPELLED_OTHERWISE.values()))
    page = [json.loads(line) for line in typescript_lines("check-opening.js", answers)]
    assert dict(zip(SPELLED_OTHERWISE, server, strict=True)) == dict.fromkeys(SPELLED_OTHERWISE, True)
    assert dict(zip(SPELLED_OTHERWISE, page, strict=True)) == dict.fromkeys(SPELLED_OTHERWISE, True)
