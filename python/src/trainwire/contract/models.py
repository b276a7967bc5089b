"""The typed events of the v1 contract: the one public door to the generated models.

Generated code lives in `trainwire._generated` and is rewritten by `make generate`;
everything hand-written imports models from here, never from there.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import ConfigDict, Discriminator, Field, Tag, TypeAdapter

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
from trainwire._generated.events import (
    BestTrial,
    Envelope,
    ErrorInfo,
    Producer,
    Provenance,
    ResumedFrom,
    Stage,
)
from trainwire._generated.events import Line as _GeneratedLine
from trainwire._generated.reader_state import DiagnosticRecord, ReaderState, RunStateRecord

SCHEMA_VERSION = 1

#: any known event: the generated `Line` union itself, so a new event's model joins it with
#: `make generate`, as it joins the generated lists of the import above and `__all__` below
KnownEvent = _GeneratedLine.model_fields["root"].annotation

#: event name -> model class, in the order of the contract
EVENT_MODELS: dict[str, type[Envelope]] = {
    model.model_fields["event"].annotation.__args__[0]: model for model in get_args(KnownEvent)
}
EVENT_NAMES: frozenset[str] = frozenset(EVENT_MODELS)


class UnknownEvent(Envelope):
    """A line whose envelope is valid but whose event name this version does not know.

    Forward compatibility: a newer minor version may add events; they are delivered,
    with all their fields, instead of being rejected.
    """

    model_config = ConfigDict(extra="allow", frozen=False)


def _event_tag(value: Any) -> str:
    name = value.get("event") if isinstance(value, dict) else getattr(value, "event", None)
    return name if isinstance(name, str) and name in EVENT_NAMES else "unknown"


# built from EVENT_MODELS at import: a type for pydantic, not one a static checker can read
_TAGGED = tuple(Annotated[model, Tag(name)] for name, model in EVENT_MODELS.items()) + (
    Annotated[UnknownEvent, Tag("unknown")],
)
Event = Annotated[Union[_TAGGED], Discriminator(_event_tag)]  # type: ignore[valid-type]  # noqa: UP007 - built at import
"""Any line: a known event model, or `UnknownEvent` for an event name not in v1."""

#: validates one line (JSON bytes or a parsed object) into a typed event
EVENT_ADAPTER: TypeAdapter[Any] = TypeAdapter(Event)
#: known events only, discriminated inside pydantic-core (no Python call per line): the
#: readers' fast path; an unknown event name fails it and takes `EVENT_ADAPTER`'s path
KNOWN_EVENT_ADAPTER: TypeAdapter[Any] = TypeAdapter(Annotated[KnownEvent, Field(discriminator="event")])  # type: ignore[arg-type]
#: validates against the contract's union only (an unknown event name is an error)
LINE_ADAPTER: TypeAdapter[Any] = TypeAdapter(_GeneratedLine)

__all__ = [
    "SCHEMA_VERSION",
    "BestTrial",
    "DiagnosticRecord",
    "Envelope",
    "ErrorInfo",
    "Event",
    "EVENT_ADAPTER",
    "EVENT_MODELS",
    "EVENT_NAMES",
    "field_pattern",
    "field_values",
    "KnownEvent",
    "KNOWN_EVENT_ADAPTER",
    "LINE_ADAPTER",
    "Producer",
    "Provenance",
    "ReaderState",
    "ResumedFrom",
    "RunStateRecord",
    "Stage",
    "UnknownEvent",
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


def field_values(model: type[Any], name: str) -> frozenset[Any]:
    """The values the contract allows in `model.name` (its enum), read from the generated model."""

    def literals(annotation: Any) -> list[Any]:
        if get_origin(annotation) is Literal:
            return list(get_args(annotation))
        return [value for argument in get_args(annotation) for value in literals(argument)]

    return frozenset(literals(model.model_fields[name].annotation))


def field_pattern(model: type[Any], name: str) -> str:
    """The pattern of the string field `model.name`, without its anchors."""
    for constraint in model.model_fields[name].metadata:
        pattern = getattr(constraint, "pattern", None)
        if isinstance(pattern, str):
            return pattern.removeprefix("^").removesuffix("$")
    raise LookupError(f"{model.__name__}.{name} has no pattern")
