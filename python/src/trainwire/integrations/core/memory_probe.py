"""What `train.step.memory` says for this process: each local accelerator torch has in use,
else the process's peak resident memory (the contract's `cpu` entry).

Read at each reported step, so it stays cheap: torch is never imported here (only a torch
the training already imported is asked), CUDA is asked only once it is initialised, and the
peak resident memory is one `getrusage` call.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["step_memory"]

try:  # no `resource` on Windows: no peak resident memory there
    import resource
except ImportError:  # pragma: no cover - POSIX here
    resource = None  # type: ignore[assignment]

# ru_maxrss is in kibibytes on Linux and in bytes on macOS
_RSS_UNIT = 1 if sys.platform == "darwin" else 1024


def step_memory() -> dict[str, dict[str, int | None]] | None:
    """`{device: {allocated_bytes, reserved_bytes, peak_bytes}}` now, or None when nothing can tell."""
    devices = _cuda_devices()
    if devices:
        return devices
    peak = _peak_rss()
    return None if peak is None else {"cpu": {"allocated_bytes": None, "reserved_bytes": None, "peak_bytes": peak}}


def _cuda_devices() -> dict[str, dict[str, int | None]]:
    torch: Any = sys.modules.get("torch")
    if torch is None:
        return {}
    try:
        if not torch.cuda.is_initialized():
            return {}
        return {
            f"cuda:{index}": {
                "allocated_bytes": int(torch.cuda.memory_allocated(index)),
                "reserved_bytes": int(torch.cuda.memory_reserved(index)),
                "peak_bytes": int(torch.cuda.max_memory_allocated(index)),
            }
            for index in range(torch.cuda.device_count())
        }
    except Exception:  # a broken driver must not cost the step
        return {}


def _peak_rss() -> int | None:
    if resource is None:
        return None
    try:
        return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * _RSS_UNIT
    except (OSError, ValueError):
        return None
