"""The `trainwire serve` page survives any value (issue 36), in headless Chromium against a real
server: a summary with a numeric `git_sha` and `status` (and rows of every wrong shape a proxy
adds) leaves the good rows shown; config keys named like Object's own properties filter and
persist; the token leaves the address bar and a reload still shows the runs; metric names with
line breaks are charted; a CSV label that starts a formula is neutralised. The browser's part is
`typescript/test/browser/dashboard-values.ts`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support.paths import BROWSER_SCRIPTS
from support.serve_process import serve

from trainwire import Run
from trainwire.contract.printable import printable

GOOD = ["good-a", "good-b", "line-breaks"]
LINE_BREAKS = ["a\nb", "c\rd", "e\u2028f"]
FORMULAS = ["=cmd|' /C calc'!A0", ";=cmd|' /C calc'!A0"]


def _run(directory: Path, config: dict[str, Any], metrics: dict[str, float] | None = None) -> None:
    run = Run(directory, step_interval_s=0, heartbeat_interval_s=None)
    run.start(total_steps=3, config=config, provenance=False)
    for step in range(1, 4):
        run.step(step, loss=1.0 / step, metrics={name: value * step for name, value in (metrics or {}).items()})
    run.finish()


def _hostile_summary(directory: Path) -> None:
    """A finished run whose journal summary says `git_sha: 12345` and `status: 123`."""
    _run(directory, {"lr": 0.3})
    (summary,) = directory.glob("runs/*/summary.json")
    summary.write_text(json.dumps({**json.loads(summary.read_text()), "git_sha": 12345, "status": 123}))


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    served = tmp_path_factory.mktemp("values")
    _run(served / "good-a", {"lr": 0.1})
    _run(served / "good-b", {"lr": 0.2, "constructor": "ctor-value", "toString": "ts-value", "hasOwnProperty": 1})
    _run(served / "line-breaks", {"lr": 0.1}, {name: 1.0 for name in LINE_BREAKS + FORMULAS})
    _hostile_summary(served / "hostile-summary")
    with serve(str(served)) as server:
        browser = subprocess.run(
            ["node", str(BROWSER_SCRIPTS / "dashboard-values.js"), f"{server.base}/?token={server.token}"],
            capture_output=True, text=True, timeout=240,
        )  # fmt: skip
    assert browser.returncode == 0, browser.stdout + browser.stderr
    return {report["check"]: report for report in map(json.loads, browser.stdout.splitlines())}


def test_a_summary_with_a_numeric_git_sha_and_status_leaves_every_good_row_shown(
    reports: dict[str, dict[str, Any]],
) -> None:
    rows = reports["rows"]
    # the real runs and the proxy's one row with a key, once; its fields of the wrong type blanked
    assert sorted(rows["status"]) == sorted([*GOOD, "hostile-summary", "injected"])
    assert rows["status"]["good-a"] == rows["status"]["good-b"] == "succeeded"
    assert rows["status"]["injected"] == "–" and rows["git_sha"]["injected"] == "–"
    assert rows["progress"]["injected"].strip() == "–"
    # served as written today; a server that validates summaries shows the stream's status instead
    assert rows["status"]["hostile-summary"] in ("–", "succeeded")
    assert rows["git_sha"]["hostile-summary"] != "12345"
    assert "unreachable" not in rows["note"]


def test_config_keys_named_like_object_properties_filter_and_persist(reports: dict[str, dict[str, Any]]) -> None:
    config = reports["config keys"]
    assert config["filtered"] == ["good-b"]
    assert config["constructor"]["good-b"] == "ctor-value" and config["toString"]["good-b"] == "ts-value"
    assert config["hasOwnProperty"]["good-b"] == "1"
    # a run without the key has no value for it, not Object's own
    assert {config[name]["good-a"] for name in ("constructor", "toString", "hasOwnProperty")} == {"–"}
    # the chosen columns persist through localStorage and still show after a reload
    assert reports["reload"]["constructor"] == config["constructor"]


def test_the_token_leaves_the_address_bar_and_a_reload_still_shows_the_runs(
    reports: dict[str, dict[str, Any]],
) -> None:
    reload = reports["reload"]
    assert "token" not in reload["url"]
    assert reload["note"].startswith("trainwire ") and "refused" not in reload["note"]
    assert "good-a" in reload["constructor"]


def test_metric_names_with_line_breaks_are_charted(reports: dict[str, dict[str, Any]]) -> None:
    charts = reports["line breaks"]["charts"]
    # each on its own chart of its three points, its title shown with the break escaped (`a\x0ab`)
    assert {name: charts.get(printable(name)) for name in LINE_BREAKS} == {name: 3 for name in LINE_BREAKS}
    assert charts["loss"] == 3
    assert "step 3 / 3" in reports["line breaks"]["progress"]


def test_a_csv_label_starting_a_formula_is_neutralised(reports: dict[str, dict[str, Any]]) -> None:
    csv = reports["csv"]["csv"]
    for label in FORMULAS:
        rows = csv[label].splitlines()
        assert rows[0] == "series,step,time,value" and len(rows) == 4
        expected = f'"\'{label}"' if label.startswith("=") else f'"{label}"'
        assert all(row.startswith(expected + ",") for row in rows[1:]), rows
