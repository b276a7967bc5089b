"""Runs' openings (`GET /api/runs/<key>/opening`) under a deadline that bounds their cost, not
only the wait for them.

- The fold of an opening stops at its deadline (`open_from_snapshots` is asked between
  chunks of the stream), so a 503 leaves no work behind in a file thread.
- However many clients ask for one run's opening at once, it is built once and shared.
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

from trainwire.serve.index import IndexedStream

__all__ = ["FAILED_OPENING_PAUSE_S", "OpeningRefused", "Openings"]

logger = logging.getLogger("trainwire.serve")

#: how long a run whose opening passed its deadline is not tried again
FAILED_OPENING_PAUSE_S = 60.0

#: builds one run's opening in a file thread; its second argument says when to stop
Build = Callable[[IndexedStream, Callable[[], bool]], "str | None"]
#: runs work in a file thread under the deadline; raises TimeoutError after setting the event
UntilDeadline = Callable[[Callable[[], "str | None"], threading.Event], Awaitable["str | None"]]


class OpeningRefused(Exception):
    """The run's opening passed its deadline lately: it is not tried again for `retry_after_s`."""

    def __init__(self, retry_after_s: int) -> None:
        super().__init__(
            f"opening this run took longer than the server's deadline; it is not tried again for {retry_after_s} s"
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
        stop = threading.Event()
        try:
            return await self._until_deadline(lambda: self._build(found, stop.is_set), stop)
        except TimeoutError:
            self._failed_at[key] = time.monotonic()
            logger.warning(
                "trainwire serve: the opening of %s passed its deadline: stopped, not tried again for %d s",
                key,
                math.ceil(self._pause_s),
            )
            raise OpeningRefused(math.ceil(self._pause_s)) from None
