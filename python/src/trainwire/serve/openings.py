"""Runs' openings (`GET /api/runs/<key>/opening`) under a deadline that bounds their cost, not
only the wait for them.

- The fold of an opening stops at its deadline (`open_from_snapshots` asks in every read
  loop, the stream's and each step file's), so a 503 leaves no work behind in a file thread.
- However many clients ask for one run's opening at once, it is built once and shared, in
  threads of its own (`OPENING_WORKERS`): openings never hold the threads that list the
  runs and send the streams.
- A run whose opening passed its deadline is not tried again for `pause_s`: its clients are
  answered 503 at once, with `Retry-After`, and read its stream instead. One log line says so.
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading
import time
from collections.abc import Awaitable, Callable

import anyio

from trainwire.serve.index import IndexedStream

__all__ = ["FAILED_OPENING_PAUSE_S", "OPENING_WORKERS", "OpeningRefused", "Openings"]

logger = logging.getLogger("trainwire.serve")

#: how long a run whose opening passed its deadline is not tried again
FAILED_OPENING_PAUSE_S = 60.0
#: openings built at once
OPENING_WORKERS = 4

#: builds one run's opening in a file thread; its second argument says when to stop
Build = Callable[[IndexedStream, Callable[[], bool]], "str | None"]
#: runs work in one of the limiter's threads under the deadline; TimeoutError after setting the event
UntilDeadline = Callable[[Callable[[], "str | None"], threading.Event, anyio.CapacityLimiter], Awaitable["str | None"]]


class OpeningRefused(Exception):
    """No opening now: it passed its deadline lately (not tried again for `retry_after_s`), or
    it waited for a thread until its deadline."""

    def __init__(self, retry_after_s: int, message: str | None = None) -> None:
        super().__init__(
            message
            or f"opening this run took longer than the server's deadline; it is not tried again for {retry_after_s} s"
            " (read its stream instead)"
        )
        self.retry_after_s = retry_after_s


class Openings:
    """The openings being built, one per run, and the runs whose opening failed lately."""

    def __init__(self, build: Build, until_deadline: UntilDeadline, *, pause_s: float = FAILED_OPENING_PAUSE_S) -> None:
        self._build = build
        self._until_deadline = until_deadline
        self._pause_s = pause_s
        self._building: dict[str, asyncio.Task[str | None]] = {}
        self._failed_at: dict[str, float] = {}
        self._limiter: anyio.CapacityLimiter | None = None

    async def get(self, key: str, found: IndexedStream) -> str | None:
        """The opening of the run at `key` (None: it has none); OpeningRefused within the
        pause after its deadline passed."""
        self._refuse_if_failed_lately(key)
        task = self._building.get(key)
        if task is None:
            task = asyncio.get_running_loop().create_task(self._build_once(key, found))
            self._building[key] = task
            task.add_done_callback(lambda _: self._building.pop(key, None))
        # shielded: a client that leaves does not stop the opening the others wait for
        return await asyncio.shield(task)

    def _refuse_if_failed_lately(self, key: str) -> None:
        failed_at = self._failed_at.get(key)
        if failed_at is None:
            return
        left = self._pause_s - (time.monotonic() - failed_at)
        if left <= 0:
            del self._failed_at[key]
            return
        raise OpeningRefused(math.ceil(left))

    async def _build_once(self, key: str, found: IndexedStream) -> str | None:
        if self._limiter is None:  # made in the event loop that uses it
            self._limiter = anyio.CapacityLimiter(OPENING_WORKERS)
        stop, started = threading.Event(), threading.Event()

        def build() -> str | None:
            started.set()
            return self._build(found, stop.is_set)

        try:
            return await self._until_deadline(build, stop, self._limiter)
        except TimeoutError:
            if not started.is_set():  # other runs' openings held every thread: this one is not to blame
                raise OpeningRefused(1, "the server is busy opening other runs; try again") from None
            self._failed_at[key] = time.monotonic()
            logger.warning(
                "trainwire serve: the opening of %s passed its deadline: stopped, not tried again for %d s",
                key,
                math.ceil(self._pause_s),
            )
            raise OpeningRefused(math.ceil(self._pause_s)) from None
