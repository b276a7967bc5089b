"""The lines of a run a view replays beside its charts (the run's header, phase and trial
marks, a stop, the end): what the journal's snapshot keeps and an opening hands a page.

`VIEW_EVENTS` is generated from each event schema's `x-trainwire-view-event`, into this
package and into the dashboard page's feed messages (the lines the page's worker passes to
its panels) alike: a view's choice, not a family of the vocabulary (`run.heartbeat` and
`phase.progress` are left out).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any

from trainwire._generated.contract import VIEW_EVENTS

__all__ = ["MAX_VIEW_EVENTS", "VIEW_EVENTS", "ViewEvents"]

#: the most a run keeps: its first `run.started`, then the latest others
MAX_VIEW_EVENTS = 1000


class ViewEvents:
    """A run's view events in order, bounded: the first `run.started` always, then the latest."""

    def __init__(self, saved: Iterable[Mapping[str, Any]] = ()) -> None:
        self._started: dict[str, Any] | None = None
        self._rest: deque[dict[str, Any]] = deque(maxlen=MAX_VIEW_EVENTS - 1)
        self.add(saved)

    def add(self, lines: Iterable[Mapping[str, Any]]) -> None:
        """Keeps the view events among `lines` (validated line dicts, applied to the run)."""
        for line in lines:
            name = line.get("event")
            if name not in VIEW_EVENTS:
                continue
            if name == "run.started" and self._started is None:
                self._started = dict(line)
            else:
                self._rest.append(dict(line))

    def to_list(self) -> list[dict[str, Any]]:
        return ([] if self._started is None else [self._started]) + list(self._rest)
