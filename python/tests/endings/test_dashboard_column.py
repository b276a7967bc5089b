"""The dashboard's column of the endings matrix: `trainwire serve` over the eight endings'
directories, read in headless Chromium (one session for all of them, its part is
`typescript/test/browser/dashboard-endings.ts`): the runs list and each run's page tell the
verdict every other column is held to, `trainwire runs --json`'s."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest
from support.endings import ENDINGS, Ending
from support.paths import BROWSER_SCRIPTS
from support.serve_process import serve

from trainwire.contract.humanize import format_duration
from trainwire.lines.verdict import status_text


@pytest.fixture(scope="module")
def shown(endings: dict[str, Ending]) -> dict[str, dict[str, Any]]:
    """What the runs list and the run's page show of each ending, by the ending's name."""
    root = next(iter(endings.values())).out.parent
    with serve(str(root)) as server:
        keys = {row["key"]: row["run_id"] for row in server.rows()}
        assert sorted(keys) == sorted(ENDINGS)  # each ending's directory is its folder
        browser = subprocess.run(
            ["node", str(BROWSER_SCRIPTS / "dashboard-endings.js"), f"{server.base}/?token={server.token}", *ENDINGS],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    assert browser.returncode == 0, browser.stdout + browser.stderr
    return {report.pop("check"): report for report in map(json.loads, browser.stdout.splitlines())}


def _reference(listed: tuple[list[dict[str, Any]], str], ending: Ending) -> dict[str, Any]:
    (row,) = [row for row in listed[0] if row["run_id"] == ending.run_id]
    return row["verdict"]


def _checkpoint_text(verdict: dict[str, Any]) -> str | None:
    """The checkpoint as `verdict_text` words it."""
    checkpoint = verdict["checkpoint"]
    if checkpoint is None:
        return None
    return f"checkpoint {checkpoint['path']}" + ("" if checkpoint["source"] == "run.finished" else " (last saved)")


def _duration_text(verdict: dict[str, Any]) -> str:
    return "–" if verdict["duration_s"] is None else format_duration(verdict["duration_s"])


@pytest.mark.parametrize("name", list(ENDINGS))
def test_the_runs_list(endings: dict[str, Ending], listed: Any, shown: Any, name: str) -> None:
    verdict, cells = _reference(listed, endings[name]), shown[name]["list"]
    assert cells["status"] == status_text(verdict).replace("_", " ")
    assert cells["progress"].split("/")[0].strip() == str(verdict["step"])
    assert cells["duration_s"] == _duration_text(verdict)
    best = verdict["best"].get("loss")
    assert (
        (cells["best_loss"] == "–")
        if best is None
        else float(cells["best_loss"]) == pytest.approx(best["value"], rel=1e-3)
    )


@pytest.mark.parametrize("name", list(ENDINGS))
def test_the_run_page(endings: dict[str, Ending], listed: Any, shown: Any, name: str) -> None:
    verdict, page = _reference(listed, endings[name]), shown[name]
    assert page["settled"], page  # the page came to an ending, not `running`
    assert page["badge"] == status_text(verdict).replace("_", " ")
    assert page["step"] == str(verdict["step"])
    parts = page["progress"].split(" · ")
    assert f"duration {_duration_text(verdict)}" in parts
    checkpoint = _checkpoint_text(verdict)
    assert checkpoint is None or checkpoint in parts, page["progress"]
