"""A non-finite number in a run's files reaches `/api/runs` as `null`, the contract's rule for
the stream (writer rule 7): a bare `NaN` or `Infinity` is not JSON, and the browser's
`JSON.parse` refuses the whole answer, so the page showed no run at all."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from support.paths import ROOT
from support.serve_process import make_run, serve


def _strict(body: bytes) -> Any:
    def refuse(constant: str) -> None:
        raise ValueError(f"{constant} is not JSON")

    return json.loads(body, parse_constant=refuse)  # as JSON.parse reads it


def _poisoned(directory: Path) -> None:
    """A finished run whose summary (newer than its stream, so the row is read from it alone)
    and config hold non-finite numbers, as a hand-edited or another writer's file may."""
    run_id = make_run(directory)
    journal = directory / "runs" / run_id
    summary = (journal / "summary.json").read_text()
    summary = summary.replace('"loss": 0.2', '"loss": NaN').replace('"value": 0.2', '"value": -Infinity')
    assert "NaN" in summary and "Infinity" in summary
    (journal / "summary.json").write_text(summary)
    (journal / "config.json").write_text('{"lr": Infinity, "warmup": NaN, "layers": 4}')


def test_non_finite_numbers_reach_the_runs_list_as_null(tmp_path: Path) -> None:
    _poisoned(tmp_path / "out")
    with serve(str(tmp_path / "out")) as server:
        for query in ("", "?sort=last_loss&order=asc", "?filter=nan"):
            while True:  # the first pass over the runs: until the answer stops saying `scanning`
                status, _, body = server.request(f"/api/runs{query}")
                assert status == 200
                page = _strict(body)  # a bare NaN fails here
                if not page["scanning"]:
                    break
            if query == "?filter=nan":  # the cells show no `NaN` to find
                assert page["rows"] == []
                continue
            (row,) = page["rows"]
            assert row["last_loss"] is None and row["best_loss"] is None
            assert row["config"] == {"lr": None, "warmup": None, "layers": 4}


def test_trainwire_runs_json_writes_null_too(tmp_path: Path) -> None:
    _poisoned(tmp_path / "out")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python" / "src")}
    done = subprocess.run(
        [sys.executable, "-m", "trainwire", "runs", str(tmp_path / "out"), "--json"],
        env=env,
        capture_output=True,
        check=True,
        timeout=120,
    )
    (row,) = _strict(done.stdout)
    assert row["last_loss"] is None and row["verdict"]["best"]["loss"]["value"] is None
