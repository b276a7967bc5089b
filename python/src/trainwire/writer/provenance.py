"""Where a run came from: code version, runtime, packages, machine (best effort, never fails)."""

from __future__ import annotations

import logging
import os
import platform
import subprocess
import sys
import threading
from typing import Any

from trainwire.writer.package_versions import installed_versions

__all__ = ["KEY_PACKAGES", "ProvenancePrefetch", "collect_provenance", "run_git"]

logger = logging.getLogger("trainwire.writer.provenance")

#: packages whose versions are recorded when installed
KEY_PACKAGES = ("trainwire", "torch", "transformers", "accelerate", "pydantic", "numpy")
_GIT_TIMEOUT_S = 2.0


def collect_provenance(seed: int | None = None, cwd: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The `provenance` object of `run.started`; a part that cannot be found is left out.

    git is asked about `cwd` (default: the working directory); outside a work tree
    `git_sha` and `git_dirty` are null. The accelerator is read from torch only when
    the program already imported it.
    """
    return _assemble(_git(cwd), seed, _runtime())


def _assemble(git: dict[str, Any], seed: int | None, runtime: dict[str, Any]) -> dict[str, Any]:
    """The parts in the schema's order: git, seed, then the runtime."""
    provenance = dict(git)
    if seed is not None:
        provenance["seed"] = seed
    provenance.update(runtime)
    return provenance


def _runtime() -> dict[str, Any]:
    runtime: dict[str, Any] = {
        "python": platform.python_version(),
        "packages": installed_versions(KEY_PACKAGES),
        "platform": platform.platform(),
    }
    accelerator = _accelerator()
    if accelerator is not None:
        runtime["accelerator"] = accelerator
    return runtime


class ProvenancePrefetch:
    """Collects provenance in a background thread, so that starting a run does not wait for git.

    An integration creates it when it is set up (say, when a callback is attached) and asks
    for the `result` when the run starts, usually long after the thread has finished.
    """

    def __init__(self, cwd: str | os.PathLike[str] | None = None) -> None:
        self._cwd = cwd
        self._found: tuple[dict[str, Any], dict[str, Any]] | None = None  # git, runtime
        self._thread = threading.Thread(target=self._collect, name="trainwire-provenance", daemon=True)
        self._thread.start()

    def _collect(self) -> None:
        try:
            self._found = (_git(self._cwd), _runtime())
        except Exception:  # best effort, like collect_provenance itself
            logger.debug("provenance not collected", exc_info=True)

    def result(self, seed: int | None = None, timeout_s: float = _GIT_TIMEOUT_S) -> dict[str, Any] | None:
        """The provenance with `seed`, or None when it is not ready in `timeout_s`."""
        self._thread.join(timeout_s)
        if self._found is None:
            return None
        git, runtime = self._found
        return _assemble(git, seed, runtime)


def _git(cwd: str | os.PathLike[str] | None) -> dict[str, Any]:
    sha = run_git(["rev-parse", "--verify", "HEAD"], cwd)
    if sha is None:
        return {}
    if sha.returncode != 0:  # git works, but this is not a work tree (or has no commit)
        return {"git_sha": None, "git_dirty": None}
    # untracked files count: a run from new, uncommitted files cannot be reproduced from the sha
    status = run_git(["status", "--porcelain", "--untracked-files=normal"], cwd)
    dirty = None if status is None or status.returncode != 0 else bool(status.stdout.strip())
    return {"git_sha": sha.stdout.strip(), "git_dirty": dirty}


def run_git(args: list[str], cwd: str | os.PathLike[str] | None) -> subprocess.CompletedProcess[str] | None:
    """git's answer, or None when git is missing, hangs or fails to start."""
    try:
        return subprocess.run(
            ["git", *args],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        logger.debug("git %s: %s", " ".join(args), exc)
        return None


def _accelerator() -> dict[str, Any] | None:
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    try:
        if torch.cuda.is_available():
            return {"kind": "cuda", "count": torch.cuda.device_count(), "name": torch.cuda.get_device_name(0)}
        xpu = getattr(torch, "xpu", None)
        if xpu is not None and xpu.is_available():
            return {"kind": "xpu", "count": xpu.device_count(), "name": xpu.get_device_name(0)}
        mps = getattr(torch.backends, "mps", None)
        if mps is not None and mps.is_available():
            return {"kind": "mps", "count": 1, "name": None}
        return {"kind": "cpu", "count": os.cpu_count() or 1, "name": platform.processor() or None}
    except Exception:
        logger.debug("could not read the accelerator from torch", exc_info=True)
        return None
