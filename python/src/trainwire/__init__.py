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
    "Run": "trainwire.writer.run",
    "EXIT_CODES": "trainwire.contract.status",
    "Decoder": "trainwire.reader.decoder",
    "StreamReader": "trainwire.reader.state",
    "read_state": "trainwire.reader.state",
    "request_stop": "trainwire.stop",
    "StopControl": "trainwire.stop",
    "RunInterrupted": "trainwire.contract.errors",
    "StreamError": "trainwire.contract.errors",
    "TrainwireError": "trainwire.contract.errors",
}
# the typed events and the union over lines (generated models, through trainwire.contract.models)
_MODEL_NAMES = (
    "Event",
    "EVENT_ADAPTER",
    "EVENT_NAMES",
    "UnknownEvent",
    "Envelope",
    "RunStarted",
    "RunHeartbeat",
    "PhaseStarted",
    "PhaseEnded",
    "TrainStep",
    "TrainEpoch",
    "TrainRestarted",
    "EvalCompleted",
    "CheckpointSaved",
    "TrialStarted",
    "TrialEnded",
    "StopRequested",
    "RunFinished",
    "ReaderState",
)
_EXPORTS.update(dict.fromkeys(_MODEL_NAMES, "trainwire.contract.models"))

if TYPE_CHECKING:
    from trainwire.contract.errors import RunInterrupted, StreamError, TrainwireError
    from trainwire.contract.models import (
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
    from trainwire.contract.status import EXIT_CODES
    from trainwire.reader.decoder import Decoder
    from trainwire.reader.state import StreamReader, read_state
    from trainwire.stop import StopControl, request_stop
    from trainwire.writer.run import Run

# the public API, documented in docs/python.md ("The public API"); the lazy table above
# must name exactly these (a test holds them together)
__all__ = [
    "__version__",
    # writing
    "Run",
    "EXIT_CODES",
    # reading
    "Decoder",
    "StreamReader",
    "read_state",
    # stopping
    "request_stop",
    "StopControl",
    # errors
    "RunInterrupted",
    "StreamError",
    "TrainwireError",
    # the typed events
    "Event",
    "EVENT_ADAPTER",
    "EVENT_NAMES",
    "UnknownEvent",
    "Envelope",
    "RunStarted",
    "RunHeartbeat",
    "PhaseStarted",
    "PhaseEnded",
    "TrainStep",
    "TrainEpoch",
    "TrainRestarted",
    "EvalCompleted",
    "CheckpointSaved",
    "TrialStarted",
    "TrialEnded",
    "StopRequested",
    "RunFinished",
    "ReaderState",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'trainwire' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
