"""trainwire: a versioned NDJSON contract for machine-learning training progress.

The names below are imported on first use, so `import trainwire.stop` (say, in a
controller) does not pay for the models, and nothing here ever imports torch.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

# public name -> the module that defines it
_EXPORTS = {
    "__version__": "trainwire._version",
    "Run": "trainwire.writer.run",
    "progress_arguments": "trainwire.writer.command_line",
    "run_from_arguments": "trainwire.writer.command_line",
    "EXIT_CODES": "trainwire.contract.status",
    "Decoder": "trainwire.lines.decoder",
    "StreamReader": "trainwire.reader.state",
    "read_state": "trainwire.reader.state",
    "request_stop": "trainwire.stop",
    "StopControl": "trainwire.stop",
    "RunInterrupted": "trainwire.contract.errors",
    "StreamError": "trainwire.contract.errors",
    "TrainwireError": "trainwire.contract.errors",
}

if TYPE_CHECKING:
    from trainwire._generated.event_models import (
        # generated: event-model-imports
        CheckpointSaved,
        EvalCompleted,
        PhaseEnded,
        PhaseProgress,
        PhaseStarted,
        RunFinished,
        RunHeartbeat,
        RunStarted,
        StopRequested,
        TrainEpoch,
        TrainRestarted,
        TrainRolledBack,
        TrainStep,
        TrialEnded,
        TrialStarted,
        # end: event-model-imports
    )
    from trainwire._version import __version__
    from trainwire.contract.errors import RunInterrupted, StreamError, TrainwireError
    from trainwire.contract.models import (
        EVENT_ADAPTER,
        EVENT_NAMES,
        Envelope,
        Event,
        ReaderState,
        UnknownEvent,
    )
    from trainwire.contract.status import EXIT_CODES
    from trainwire.lines.decoder import Decoder
    from trainwire.reader.state import StreamReader, read_state
    from trainwire.stop import StopControl, request_stop
    from trainwire.writer.command_line import progress_arguments, run_from_arguments
    from trainwire.writer.run import Run

# the public API, documented in docs/python.md ("The public API"); the lazy table serves
# exactly these (a test holds them together); the event models' lines are generated
__all__ = [
    "__version__",
    # writing
    "Run",
    "progress_arguments",
    "run_from_arguments",
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
    "ReaderState",
    # the model of each event (`make generate` writes the list)
    # generated: event-model-names
    "RunStarted",
    "RunHeartbeat",
    "PhaseStarted",
    "PhaseEnded",
    "PhaseProgress",
    "TrainStep",
    "TrainEpoch",
    "TrainRestarted",
    "TrainRolledBack",
    "EvalCompleted",
    "CheckpointSaved",
    "TrialStarted",
    "TrialEnded",
    "StopRequested",
    "RunFinished",
    # end: event-model-names
]
# the rest of `__all__`: the typed events and the union over lines (generated models, through
# trainwire.contract.models)
_EXPORTS.update(dict.fromkeys((name for name in __all__ if name not in _EXPORTS), "trainwire.contract.models"))


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'trainwire' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
