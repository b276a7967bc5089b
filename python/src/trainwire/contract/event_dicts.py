"""The known events validated into plain dicts, and the models they stand for.

`KNOWN_EVENT_DICTS` (see `trainwire.contract.known_event_dicts`) validates a line into a
`dict` whose keys are exactly the fields its model would set; `event_model` turns such a
dict into the model the line validates to, `event_dict` back.
"""

from __future__ import annotations

from typing import Any

from trainwire.contract.known_event_dicts import KNOWN_EVENT_DICTS

__all__ = ["KNOWN_EVENT_DICTS", "event_dict", "event_model"]


def event_model(event: dict[str, Any]) -> Any:
    """The typed event (a model of `trainwire.contract.models`) of a validated dict."""
    from trainwire.contract.models import EVENT_ADAPTER  # the models cost ~150 ms: only when a model is asked for

    return EVENT_ADAPTER.validate_python(event)


def event_dict(event: Any) -> dict[str, Any]:
    """The validated dict of a typed event: the fields it sets, nested models as dicts."""
    dumped: dict[str, Any] = event.model_dump(exclude_unset=True)
    return dumped
