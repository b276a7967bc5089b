"""The framework versions a run records in its provenance: those of the integrations' frameworks too."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys

import pytest

from trainwire.contract.layout import STREAM_FILE

#: the frameworks of the integrations, installed in the test environment
FRAMEWORKS = ("torch", "transformers", "accelerate", "lightning", "keras", "optuna", "ray")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The `provenance.packages` of a real run started in a fresh interpreter."""
    output = tmp_path_factory.mktemp("run")
    code = f"from trainwire import Run\nwith Run({str(output)!r}) as run:\n    run.start(total_steps=1)\n    run.step(1, loss=1.0)\n"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
    started = json.loads((output / STREAM_FILE).read_text(encoding="utf-8").splitlines()[0])
    assert started["event"] == "run.started"
    packages: dict[str, str] = started["provenance"]["packages"]
    return packages


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_run_records_each_installed_frameworks_version(recorded: dict[str, str], framework: str) -> None:
    assert recorded.get(framework) == importlib.metadata.version(framework)
