"""A run writing into a shared output directory where someone left hostile journal files (a
0.1 summary beside the stream, another run's summary, a reference run's config): nested past
any parser or gigabytes large (sparse). The run starts, writes and finishes as in an empty
directory, in bounded memory: the writer reads no journal file past its cap."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.paths import ROOT

#: the run's process may peak at this; reading one of the gigabyte files whole is more
MEMORY_BOUND_BYTES = 400 << 20
DEEP = 100_000

#: a run in its own process: it prints its peak memory (VmHWM, bytes) and its stream's events
RUN_SCRIPT = """
import json, sys
from pathlib import Path
from trainwire import Run
directory = Path(sys.argv[1])
run = Run(directory, run_id="fresh", step_interval_s=0, heartbeat_interval_s=None, config_reference="old")
run.start(config={"lr": 0.1}, provenance=False)
run.step(1, loss=1.0)
run.finish()
peak = next(line for line in Path("/proc/self/status").read_text().splitlines() if line.startswith("VmHWM:"))
print(int(peak.split()[1]) * 1024)
print(json.dumps([json.loads(line)["event"] for line in (directory / "progress.jsonl").read_text().splitlines()]))
"""


def _hostile(path: Path, kind: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "deep":
        path.write_text("[" * DEEP + "]" * DEEP)
    else:
        path.write_text('{"run_id": "old", "earlier_runs": []}')
        os.truncate(path, 1 << 30)  # sparse: a gigabyte that takes no disk


@pytest.mark.parametrize("kind", ["deep", "sparse"])
def test_hostile_journal_files_in_the_output_directory_never_stop_a_run(tmp_path: Path, kind: str) -> None:
    _hostile(tmp_path / "summary.json", kind)  # a 0.1 journal's summary, which the run migrates
    _hostile(tmp_path / "runs" / "old" / "summary.json", kind)  # an earlier run's, which gives earlier_runs
    _hostile(tmp_path / "runs" / "old" / "config.json", kind)  # the config_reference's config
    result = subprocess.run(
        [sys.executable, "-c", RUN_SCRIPT, str(tmp_path)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "python" / "src")},
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    peak, events = result.stdout.splitlines()
    assert json.loads(events) == ["run.started", "train.step", "run.finished"]
    assert int(peak) < MEMORY_BOUND_BYTES, f"the run reached {int(peak) >> 20} MiB"
    summary = json.loads((tmp_path / "runs" / "fresh" / "summary.json").read_text())
    assert summary["status"] == "succeeded" and summary["earlier_runs"] == []
