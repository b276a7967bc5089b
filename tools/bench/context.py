"""What the figures of one bench run share: the scale, a scratch directory, measurements made once."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from scale import MB, Scale
from streams import write_stream

__all__ = ["BENCH_DIR", "PYTHON", "ROOT", "Context", "run_child"]

T = TypeVar("T")
BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent.parent
#: the interpreter running the bench measures the Python side too
PYTHON = sys.executable


class Context:
    """Shared state of one run. `once()` memoises a measurement (or its failure) that several figures read."""

    def __init__(self, scale: Scale, scratch: Path) -> None:
        self.scale = scale
        self.scratch = scratch
        self._memo: dict[str, Any] = {}

    def once(self, key: str, compute: Callable[[], T]) -> T:
        if key not in self._memo:
            try:
                self._memo[key] = compute()
            except Exception as error:  # every figure that needs it reports the same error
                self._memo[key] = error
        result = self._memo[key]
        if isinstance(result, Exception):
            raise result
        return result

    def scratch_dir(self, name: str) -> Path:
        """A fresh directory in the scratch space (removed with it)."""
        return Path(tempfile.mkdtemp(prefix=f"{name}-", dir=self.scratch))

    def stream(self, size: int) -> Path:
        """A valid stream of about `size` bytes, generated once per run."""

        def generate() -> Path:
            path = self.scratch / f"stream-{size // MB}MB.ndjson"
            write_stream(path, size)
            return path

        return self.once(f"stream:{size}", generate)


def run_child(args: list[str], *, timeout: float, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """Run a measuring child process; its own stderr is kept for the error message."""
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        raise RuntimeError(f"{Path(args[1]).name if len(args) > 1 else args[0]} failed: {tail}")
    return done
