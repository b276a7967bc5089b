"""`trainwire diff --against` trusts a run's recorded `config_diff.json` only when it has the
shape the writer gives it: a damaged or hostile one is said on stderr and never raises."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.cli_process import trainwire

from trainwire import Run
from trainwire.contract.clock import FakeClock
from trainwire.contract.layout import CONFIG_DIFF_FILE, run_journal_dir


def referenced_runs(directory: Path) -> tuple[str, str]:
    """A run, and a second one recording its config against the first's."""
    ids = []
    for config, reference in (({"lr": 0.1}, None), ({"lr": 0.2, "warmup": 10}, "first")):
        with Run(directory, clock=FakeClock(), heartbeat_interval_s=None, config_reference=reference and ids[0]) as run:
            run.start(config=config)
            run.step(1, loss=1.0)
        ids.append(run.run_id)
    return ids[0], ids[1]


HOSTILE_DIFFS: list[Any] = [
    [],
    "text",
    {"reference": "not an object", "changes": {}},
    {"reference": {"run_id": 7, "path": "x"}, "changes": {}},
    {"reference": {"run_id": "a", "path": ["x"]}, "changes": {}},
    {"reference": {"run_id": "a", "path": "x"}, "changes": ["lr"]},
    {"reference": {"run_id": "a", "path": "x"}, "changes": {"lr": 0.2}},
    {"changes": {"lr": [0.1, 0.2]}},
]


@pytest.mark.parametrize("hostile", HOSTILE_DIFFS, ids=[json.dumps(value)[:40] for value in HOSTILE_DIFFS])
def test_a_config_diff_not_of_its_shape_is_said_and_the_diff_is_computed_or_refused(
    tmp_path: Path, hostile: Any
) -> None:
    first, second = referenced_runs(tmp_path)
    (run_journal_dir(tmp_path, second) / CONFIG_DIFF_FILE).write_text(json.dumps(hostile))

    recorded = trainwire("diff", second, "--against", "--in", str(tmp_path))
    assert recorded.returncode == 1
    assert "Traceback" not in recorded.stderr
    assert f"{CONFIG_DIFF_FILE} is not a config diff; ignored" in recorded.stderr
    assert "no config reference was recorded" in recorded.stderr

    named = trainwire("diff", second, "--against", first, "--in", str(tmp_path), "--json")
    assert named.returncode == 0, named.stderr
    assert json.loads(named.stdout) == {"runs": [first, second], "config": {"lr": [0.1, 0.2], "warmup": [None, 10]}}


def test_a_reference_not_found_at_the_start_is_said_not_shown_as_no_difference(tmp_path: Path) -> None:
    with Run(tmp_path, clock=FakeClock(), heartbeat_interval_s=None, config_reference="gone-run") as run:
        run.start(config={"lr": 0.2})
    shown = trainwire("diff", run.run_id, "--against", "--in", str(tmp_path))
    assert shown.returncode == 1
    assert "its config reference gone-run was not found when it started" in shown.stderr
    assert "no difference" not in shown.stdout
