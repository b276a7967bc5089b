"""trainwire: a versioned NDJSON contract for machine-learning training progress.

The names below are imported on first use, so `import trainwire.stop` (say, in a
controller) does not pay for the models, and nothing here ever imports torch.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> the module that defines it
_EXPORTS = {
    "Run": "trainwire.run",
    "EXIT_CODES": "trainwire.status",
    "Decoder": "trainwire.decoder",
    "StreamReader": "trainwire.state",
    "read_state": "trainwire.state",
    "request_stop": "trainwire.stop",
    "StopControl": "trainwire.stop",
    "RunInterrupted": "trainwire.errors",
    "StreamError": "trainwire.errors",
    "TrainwireError": "trainwire.errors",
}
# the typed events and the union over lines (generated models, through trainwire.models)
_MODEL_NAMES = (
    "Event", "EVENT_ADAPTER", "EVENT_NAMES", "UnknownEvent", "Envelope",
    "RunStarted", "RunHeartbeat", "PhaseStarted", "PhaseEnded", "TrainStep", "TrainEpoch",
    "TrainRestarted", "EvalCompleted", "CheckpointSaved", "TrialStarted", "TrialEnded",
    "StopRequested", "RunFinished", "ReaderState",
)
_EXPORTS.update(dict.fromkeys(_MODEL_NAMES, "trainwire.models"))

if TYPE_CHECKING:
    from trainwire.decoder import Decoder
    from trainwire.errors import RunInterrupted, StreamError, TrainwireError
    from trainwire.models import (
        EVENT_ADAPTER,
        EVENT_NAMES,
        CheckpointSaved,
        Envelope,
        EvalCompleted,
        Event,
        PhaseEnded,
        PhaseStarted,
        ReaderState,
        RunFinished,
        RunHeartbeat,
        RunStarted,
        StopRequested,
        TrainEpoch,
        TrainRestarted,
        TrainStep,
        TrialEnded,
        TrialStarted,
        UnknownEvent,
    )
    from trainwire.run import Run
    from trainwire.state import StreamReader, read_state
    from trainwire.status import EXIT_CODES
    from trainwire.stop import StopControl, request_stop

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'trainwire' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
