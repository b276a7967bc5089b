"""The heartbeat thread: writes `run.heartbeat` whenever the run has been silent for one
interval (writer rule on liveness), so a reader can tell a quiet run from a dead one."""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["Heartbeat"]


class Heartbeat:
    """Calls `beat()` each time `idle_s()` reaches `interval_s`, on a daemon thread."""

    def __init__(self, interval_s: float, idle_s: Callable[[], float], beat: Callable[[], None], name: str) -> None:
        self._interval_s = interval_s
        self._idle_s = idle_s
        self._beat = beat
        self._name = name
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is not None or self._stopped.is_set():
            return
        self._thread = threading.Thread(target=self._loop, name=self._name, daemon=True)
        self._thread.start()

    def stop(self, join: bool = True) -> None:
        """Stops the thread; joins it unless called from it (or `join` is False)."""
        self._stopped.set()
        thread = self._thread
        if join and thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5.0)

    def _loop(self) -> None:
        wait = self._interval_s
        while not self._stopped.wait(wait):
            idle = self._idle_s()
            if idle >= self._interval_s:
                self._beat()
                wait = self._interval_s
            else:
                wait = self._interval_s - idle
