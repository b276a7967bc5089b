"""Python's cycle collector kept out of work that makes many objects in no cycle (a listing of
ten thousand runs, the runs cache parsed): its passes over them would cost a fifth to a half
of the work, and nothing it could free is made meanwhile."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collector_paused"]


@contextmanager
def collector_paused() -> Iterator[None]:
    """The collector off for the block, back as it was after (a caller that turned it off keeps it off)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
