"""Each exporter's per-event table: for every tracker event of the contract (`TRACKER_EVENTS`,
each event schema's `x-trainwire-tracker-event`), what the exporter does with it beyond its
scalars (`scalars.py`, alike in every exporter), or why it does nothing more in that tracker.
Any other event gives its scalars only, in every exporter: a new event that a tracker does not
record touches no exporter, and one it does is a decision in each (a test holds the keys).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeVar

__all__ = ["NO_COUNTERPART", "NotExported", "handler_of"]

Handler = TypeVar("Handler")


@dataclass(frozen=True, slots=True)
class NotExported:
    """A tracker event this exporter does nothing with beyond its scalars, and why."""

    reason: str


#: the tracker has nothing to show it as; it stays in the stream
NO_COUNTERPART = NotExported("no counterpart in this tracker: it stays in the stream")


def handler_of(table: Mapping[str, Handler | NotExported], name: str) -> Handler | None:
    """The handler of the event `name`; None when the table says it is not exported, for an
    event a tracker records nothing of beyond its scalars, or for an event this version does
    not know (a newer writer's)."""
    entry = table.get(name)
    return None if entry is None or isinstance(entry, NotExported) else entry
