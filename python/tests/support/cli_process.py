"""The `trainwire` command run as a real process on this checkout's sources."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support.paths import ROOT


def trainwire(*arguments: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python" / "src")}
    return subprocess.run(
        [sys.executable, "-m", "trainwire", *arguments], capture_output=True, text=True, timeout=120, cwd=cwd, env=env
    )
