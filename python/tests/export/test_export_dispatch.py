"""Each exporter dispatches through its table: every tracker event is a handler or says why not;
any other event gives its scalars only."""

from __future__ import annotations

from importlib import import_module
from typing import Any

import pytest

from trainwire._generated.contract import TRACKER_EVENTS
from trainwire.export.dispatch import NotExported, handler_of

EXPORTERS = (
    "trainwire.export.mlflow",
    "trainwire.export.tensorboard",
    "trainwire.export.wandb",
    "trainwire.export.kubeflow",
)


@pytest.mark.parametrize("module", EXPORTERS)
def test_each_tracker_event_is_handled_or_not_exported_with_a_reason(module: str) -> None:
    table: dict[str, Any] = import_module(module).EVENT_HANDLERS
    undecided = [
        name
        for name in sorted(TRACKER_EVENTS)
        if not (callable(table.get(name)) or (isinstance(table.get(name), NotExported) and table[name].reason))
    ]
    assert undecided == [], f"{module}: EVENT_HANDLERS decides nothing for {undecided}"


def test_an_event_not_exported_or_unknown_has_no_handler() -> None:
    def handle() -> None: ...

    table = {"run.started": handle, "checkpoint.saved": NotExported("no counterpart")}
    assert handler_of(table, "run.started") is handle
    assert handler_of(table, "checkpoint.saved") is None
    assert handler_of(table, "run.heartbeat") is None  # no tracker event: its scalars only
    assert handler_of(table, "model.exported") is None  # a newer writer's event
