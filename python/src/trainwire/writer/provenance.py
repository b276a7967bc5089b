"""Where a run came from: code version, runtime, packages, machine (best effort, never fails)."""

from __future__ import annotations

import importlib.util
import logging
import os
import platform
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from trainwire.writer.package_versions import installed_versions

__all__ = ["KEY_PACKAGES", "ProvenancePrefetch", "collect_provenance", "run_git"]

logger = logging.getLogger("trainwire.writer.provenance")

#: packages whose versions are recorded when installed
KEY_PACKAGES = (
    "trainwire",
    "torch",
    "transformers",
    "accelerate",
    "lightning",
    "keras",
    "optuna",
    "ray",
    "pydantic",
    "numpy",
)
_GIT_TIMEOUT_S = 2.0
#: where Linux tells the NVIDIA driver's version, read without asking torch
_NVIDIA_DRIVER_FILE = "/proc/driver/nvidia/version"
_DRIVER_VERSION = re.compile(r"Kernel Module\s+([0-9][0-9.]*)")


def collect_provenance(
    seed: int | None = None,
    cwd: str | os.PathLike[str] | None = None,
    *,
    outputs: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """The `provenance` object of `run.started`; a part that cannot be found is left out.

    git is asked about `cwd` (default: the working directory); outside a work tree
    `git_sha` and `git_dirty` are null; files under `outputs` (the run's own output
    directory) do not make the tree dirty. The accelerator is read from torch when the
    program already imported it (a run that does not use torch does not import it here;
    `ProvenancePrefetch` does, ahead of the run), in a background thread while git
    answers: reading it can initialise the device; not read within git's time limit, it
    is left out.
    """
    found: list[dict[str, Any] | None] = []
    reader = threading.Thread(
        target=lambda: found.append(_accelerator(import_torch=False)), name="trainwire-provenance", daemon=True
    )
    reader.start()
    git = _git(cwd, outputs)
    reader.join(_GIT_TIMEOUT_S)
    return _assemble(git, seed, _runtime(found[0] if found else None))


def _assemble(git: dict[str, Any], seed: int | None, runtime: dict[str, Any]) -> dict[str, Any]:
    """The parts in the schema's order: git, seed, then the runtime."""
    provenance = dict(git)
    if seed is not None:
        provenance["seed"] = seed
    provenance.update(runtime)
    return provenance


def _runtime(accelerator: dict[str, Any] | None) -> dict[str, Any]:
    runtime: dict[str, Any] = {
        "python": platform.python_version(),
        "packages": installed_versions(KEY_PACKAGES),
        "platform": platform.platform(),
    }
    if accelerator is not None:
        runtime["accelerator"] = accelerator
    return runtime


class ProvenancePrefetch:
    """Collects provenance in a background thread, so that starting a run does not wait for git.

    An integration creates it when it is set up (say, when a callback is attached) and asks
    for the `result` when the run starts, usually long after the thread has finished. The
    thread imports torch, when installed, to read the accelerator.
    """

    def __init__(self, cwd: str | os.PathLike[str] | None = None) -> None:
        self._cwd = cwd
        self._found: tuple[dict[str, Any], dict[str, Any]] | None = None  # git, runtime
        self._thread = threading.Thread(target=self._collect, name="trainwire-provenance", daemon=True)
        self._thread.start()

    def _collect(self) -> None:
        try:
            self._found = (_git(self._cwd), _runtime(_accelerator(import_torch=True)))
        except Exception:  # best effort, like collect_provenance itself
            logger.debug("provenance not collected", exc_info=True)

    def result(self, seed: int | None = None, timeout_s: float = _GIT_TIMEOUT_S) -> dict[str, Any] | None:
        """The provenance with `seed`, or None when it is not ready in `timeout_s`."""
        self._thread.join(timeout_s)
        if self._found is None:
            return None
        git, runtime = self._found
        return _assemble(git, seed, runtime)


def _git(cwd: str | os.PathLike[str] | None, outputs: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    sha = run_git(["rev-parse", "--verify", "HEAD"], cwd)
    if sha is None:
        return {}
    if sha.returncode != 0:  # git works, but this is not a work tree (or has no commit)
        return {"git_sha": None, "git_dirty": None}
    # untracked files count: a run from new, uncommitted files cannot be reproduced from the sha
    status = run_git(["status", "--porcelain", "--untracked-files=normal", *_leaving_out(outputs, cwd)], cwd)
    dirty = None if status is None or status.returncode != 0 else bool(status.stdout.strip())
    return {"git_sha": sha.stdout.strip(), "git_dirty": dirty}


def _leaving_out(outputs: str | os.PathLike[str] | None, cwd: str | os.PathLike[str] | None) -> list[str]:
    """A pathspec that leaves the run's own output directory out of `git status`: what the run
    writes is not a change to the code it ran (nothing to leave out when it is the tree itself
    or lies outside it)."""
    if outputs is None:
        return []
    relative = os.path.relpath(outputs, cwd if cwd is not None else os.getcwd())
    if relative == "." or relative.startswith(".."):
        return []
    return ["--", ".", f":(exclude){Path(relative).as_posix()}"]


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


def _accelerator(import_torch: bool) -> dict[str, Any] | None:
    """The accelerator as torch sees it (called off the training thread); with
    `import_torch`, torch is imported when installed but not imported yet. None without torch."""
    torch = sys.modules.get("torch")
    try:
        if torch is None:
            if not import_torch or importlib.util.find_spec("torch") is None:
                return None
            import torch as imported

            torch = imported
        return {**_device(torch), **_versions(torch)}
    except Exception:
        logger.debug("could not read the accelerator from torch", exc_info=True)
        return None


def _device(torch: Any) -> dict[str, Any]:
    if torch.cuda.is_available():
        return {"kind": "cuda", "count": torch.cuda.device_count(), "name": torch.cuda.get_device_name(0)}
    xpu = getattr(torch, "xpu", None)
    if xpu is not None and xpu.is_available():
        return {"kind": "xpu", "count": xpu.device_count(), "name": xpu.get_device_name(0)}
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return {"kind": "mps", "count": 1, "name": None}
    return {"kind": "cpu", "count": os.cpu_count() or 1, "name": platform.processor() or None}


def _versions(torch: Any) -> dict[str, str]:
    """The CUDA and cuDNN versions torch was built with and the driver's, those known."""
    versions = {}
    cuda = getattr(torch.version, "cuda", None)
    if cuda:
        versions["cuda_version"] = str(cuda)
    cudnn = torch.backends.cudnn.version() if cuda and torch.backends.cudnn.is_available() else None
    if cudnn:
        versions["cudnn_version"] = str(cudnn)
    driver = _driver_version()
    if driver:
        versions["driver_version"] = driver
    return versions


def _driver_version() -> str | None:
    try:
        with open(_NVIDIA_DRIVER_FILE, encoding="utf-8", errors="replace") as file:
            found = _DRIVER_VERSION.search(file.read(4096))
    except OSError:
        return None
    return found.group(1) if found else None
