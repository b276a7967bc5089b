"""File system calls off the event loop: in a few worker threads, each under a deadline, so a
slow disk, a huge tree or a hostile file can delay one answer, not the server."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from trainwire.serve.problems import Problem

__all__ = ["FILE_WORKERS", "FileWork"]

#: worker threads for file work: a stuck disk holds these, not the event loop
FILE_WORKERS = 8

T = TypeVar("T")


class FileWork:
    """File system calls in a few worker threads, each under a deadline."""

    def __init__(self, deadline_s: float) -> None:
        self._deadline_s = deadline_s
        self._limiter: anyio.CapacityLimiter | None = None

    async def run(self, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """`function(*args, **kwargs)` in a file thread; a 503 `Problem` at the deadline."""
        try:
            return await self.until_deadline(lambda: function(*args, **kwargs))
        except TimeoutError:
            raise Problem(503, "the file system did not answer in time; try again") from None

    async def until_deadline(
        self, work: Callable[[], T], stop: threading.Event | None = None, limiter: anyio.CapacityLimiter | None = None
    ) -> T:
        """`work` in a worker thread (one of `limiter`'s, else of the file threads);
        TimeoutError at the deadline, after setting `stop` (the work that checks it ends; a
        call stuck in the file system is left behind)."""
        if self._limiter is None:  # made in the event loop that uses it
            self._limiter = anyio.CapacityLimiter(FILE_WORKERS)
        try:
            with anyio.fail_after(self._deadline_s):
                return await anyio.to_thread.run_sync(work, limiter=limiter or self._limiter, abandon_on_cancel=True)
        except TimeoutError:
            if stop is not None:
                stop.set()
            raise
