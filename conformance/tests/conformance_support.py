"""Helpers the conformance tests share: the repository, the CLI as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from hypothesis import settings

ROOT = Path(__file__).resolve().parents[2]
BROKEN = Path(__file__).resolve().parent / "broken"
EXAMPLE = ROOT / "conformance" / "examples" / "minimal_reader_harness.py"

# `make test` runs a bounded budget; `make fuzz` sets TRAINWIRE_FUZZ_PROFILE=long.
settings.register_profile("ci", max_examples=30, deadline=None, derandomize=True, print_blob=True)
settings.register_profile("long", max_examples=1500, deadline=None, print_blob=True)
#: decorate fuzz tests with this rather than loading a profile: other test folders have their own
FUZZ = settings.get_profile(os.environ.get("TRAINWIRE_FUZZ_PROFILE", "ci"))


def python_command(script: Path, *args: str) -> str:
    """A harness command line for a Python script, quoted for the runner's shell-like split."""
    return " ".join(f"'{part}'" for part in (sys.executable, str(script), *args))


def conformance(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """`trainwire conformance ARGS` as a real subprocess, run from the repository root."""
    return subprocess.run(
        [sys.executable, "-m", "trainwire", "conformance", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def report_of(completed: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    return json.loads(completed.stdout)


def outcomes(harness_report: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """Results by (case, role)."""
    return {(result["case"], result["role"]): result for result in harness_report["results"]}


#: the TypeScript harness until `conformance/harnesses.json` lists it (`make test` builds dist/ first)
TYPESCRIPT_HARNESS = ["node", "typescript/dist/bin/harness.js"]


def typescript_argv() -> list[str]:
    """The TypeScript reader harness: from `conformance/harnesses.json`, else its known place."""
    from trainwire.conformance.cli import listed_harnesses

    listed = [argv for argv in listed_harnesses(ROOT) if any("harness.js" in part for part in argv)]
    argv = listed[0] if listed else TYPESCRIPT_HARNESS
    assert (ROOT / argv[-1]).is_file(), f"{argv[-1]} is missing: run `npm run build` in typescript/"
    return argv


class ReaderSession:
    """One long-lived reader harness for a whole test module: no process start per example."""

    def __init__(self, argv: list[str]) -> None:
        from trainwire.conformance.client import Harness

        self.harness = Harness(argv, cwd=ROOT, timeout_s=60)
        self.harness.start()

    def state(self, chunks: list[bytes], **liveness: Any) -> dict[str, Any]:
        import base64

        response = self.harness.request(
            "read", chunks=[base64.b64encode(chunk).decode("ascii") for chunk in chunks], **liveness
        )
        assert "state" in response, response
        return response["state"]

    def close(self) -> None:
        self.harness.stop()
