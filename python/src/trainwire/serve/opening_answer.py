"""The opening's answer (docs/dashboard.md): a stream's runs opened from their journal
snapshots, as the canonical JSON the page's `checkOpening` (`dashboard/opening.ts`) takes."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from trainwire.contract.canonical import dumps
from trainwire.journal.opening import OpenedStream, OpeningCancelled, open_from_snapshots
from trainwire.serve.index import IndexedStream

__all__ = ["OPENING_VERSION", "opening_answer", "opening_json"]

logger = logging.getLogger("trainwire.serve")

#: the form of the opening's answer; a change to its shape is a new version
OPENING_VERSION = 1


def opening_json(found: IndexedStream, cancelled: Callable[[], bool]) -> str | None:
    """The stream's opening as canonical JSON, None when a run of it cannot be opened from its
    snapshot. Built in a worker thread: the answer can be large; the fold stops once
    `cancelled()` (its deadline passed) with `OpeningCancelled`."""
    try:
        opened = open_from_snapshots(found.path, within=found.root, cancelled=cancelled)
    except OpeningCancelled:
        raise  # the deadline's: answered by the caller
    except Exception as error:  # a hostile journal costs its own opening (a 404), never a 500
        logger.warning("trainwire serve: cannot open %s from its journal (%s)", found.path, type(error).__name__)
        return None
    return None if opened is None else dumps(opening_answer(opened))


def opening_answer(opened: OpenedStream) -> dict[str, Any]:
    """The opening's answer: what the page's `checkOpening` (`dashboard/opening.ts`) takes."""
    return {
        "opening_version": OPENING_VERSION,
        "offset": opened.offset,
        "state": opened.state,
        "series": opened.series().to_dict(),
        "events": [line for run in opened.runs for line in run.events],
    }
