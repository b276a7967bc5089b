"""What names a run's process for ever, and whether its own host can prove it died.

`run.started.process` holds host, boot id, pid namespace, pid and start time. On the same
host, boot and pid namespace, a pid that is absent, or present with another start time (the
pid was reused), proves the run's process gone; anywhere else (another host, container or
boot, or a system without /proc) nothing is proven and the liveness is `unknown`.
"""

from __future__ import annotations

import functools
import os
import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["ALIVE", "GONE", "UNKNOWN", "liveness_of", "this_process"]

ALIVE, GONE, UNKNOWN = "alive", "gone", "unknown"

_PROC = Path("/proc")


def this_process() -> dict[str, Any]:
    """`run.started.process` of the calling process."""
    pid = os.getpid()
    return {
        "host": socket.gethostname()[:256] or "localhost",
        "boot_id": _boot_id(),
        "pid_namespace": _pid_namespace(),
        "pid": pid,
        "start_time": _start_time(pid),
    }


def liveness_of(process: Mapping[str, Any] | None) -> str:
    """`alive`, `gone` or `unknown` for a `run.started.process`, as this host can prove it."""
    if not isinstance(process, Mapping):
        return UNKNOWN
    pid, boot, namespace = process.get("pid"), process.get("boot_id"), process.get("pid_namespace")
    if type(pid) is not int or not isinstance(boot, str) or not isinstance(namespace, str):
        return UNKNOWN  # without a boot id and a namespace a pid names no process for certain
    if process.get("host") != socket.gethostname()[:256] or boot != _boot_id() or namespace != _pid_namespace():
        return UNKNOWN
    now_started = _start_time(pid)
    if now_started is None:
        return GONE if not (_PROC / str(pid)).exists() else UNKNOWN
    return ALIVE if now_started == process.get("start_time") else GONE


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return None


@functools.cache  # a process outlives no boot: read once, not once a run listed
def _boot_id() -> str | None:
    return _read(_PROC / "sys" / "kernel" / "random" / "boot_id")


def _pid_namespace() -> str | None:
    try:
        return os.readlink(_PROC / "self" / "ns" / "pid")
    except OSError:
        return None


def _start_time(pid: int) -> str | None:
    """Field 22 of /proc/<pid>/stat (after the command name, which may hold spaces and parentheses)."""
    stat = _read(_PROC / str(pid) / "stat")
    if stat is None:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else None
