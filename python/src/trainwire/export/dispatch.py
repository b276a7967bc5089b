"""Each exporter's per-event table: for every event of the contract, what the exporter does
with it beyond its scalars (`scalars.py`, alike in every exporter), or why it does nothing
more. A table holds every event (a test enumerates the contract), so a new event is a
decision in each exporter rather than a silent fall-through of an `if` chain.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeVar

__all__ = ["NO_COUNTERPART", "SCALARS_ONLY", "NotExported", "handler_of"]

Handler = TypeVar("Handler")


@dataclass(frozen=True, slots=True)
class NotExported:
    """An event the exporter does nothing with beyond its scalars, and why."""

    reason: str


#: the event's scalars are all a tracker shows of it
SCALARS_ONLY = NotExported("its scalars only (export/scalars.py)")
#: the tracker has nothing to show it as; it stays in the stream
NO_COUNTERPART = NotExported("no counterpart in this tracker: it stays in the stream")


def handler_of(table: Mapping[str, Handler | NotExported], name: str) -> Handler | None:
    """The handler of the event `name`; None when the table says it is not exported, or for
    an event this version does not know (a newer writer's)."""
    entry = table.get(name)
    return None if entry is None or isinstance(entry, NotExported) else entry
