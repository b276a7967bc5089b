"""The arguments of `Run` as the contract takes them: each value is checked and converted
where it has one obvious meaning, and what cannot be taken is reported to `Complaints`
(writer rule 3: a warning, or `RejectedInput` in a strict run) and written as null, left
out, or the event dropped, as each message says."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Collection, Mapping
from typing import Any

from pydantic_core import SchemaValidator, ValidationError

from trainwire._generated.contract import ENVELOPE_FIELDS, EVENT_NAME_PATTERN, RUN_ID_PATTERN
from trainwire._version import __version__
from trainwire.contract.known_event_dicts import event_field_pattern, event_field_schema, event_field_values
from trainwire.writer.checks import Complaints
from trainwire.writer.fields import UNSET, new_run_id
from trainwire.writer.values import BAD, integer, number

__all__ = [
    "CHECKPOINT_REASONS",
    "FINISH_REASONS",
    "PHASE_STATUSES",
    "RESTART_REASONS",
    "STOP_SIGNALS",
    "STOP_SOURCES",
    "TRIAL_STATUSES",
    "Arguments",
    "checked_run_id",
    "extension_fields",
    "is_run_id",
]

logger = logging.getLogger("trainwire.writer")

_RUN_ID_RE = re.compile(RUN_ID_PATTERN)
_EVENT_NAME = re.compile(EVENT_NAME_PATTERN)
_ENVELOPE_KEYS = frozenset(ENVELOPE_FIELDS)
_PHASE_RE = re.compile(event_field_pattern("phase.started", "phase"))
# the contract's enums, read from the generated validator the lines are checked with
# (the writer builds no pydantic model)
PHASE_STATUSES = event_field_values("phase.ended", "status")
RESTART_REASONS = event_field_values("train.restarted", "reason")
CHECKPOINT_REASONS = event_field_values("checkpoint.saved", "reason")
TRIAL_STATUSES = event_field_values("trial.ended", "status")
STOP_SOURCES = event_field_values("stop.requested", "source")
STOP_SIGNALS = event_field_values("stop.requested", "signal")
FINISH_REASONS = event_field_values("run.finished", "reason")
# a run's name and each of its tags, checked by the schema's own rules (length, printable)
_NAME_SCHEMA = event_field_schema("run.started", "name")
_TAGS_SCHEMA = event_field_schema("run.started", "tags")
_NAME = SchemaValidator(_NAME_SCHEMA)
_TAG = SchemaValidator(_TAGS_SCHEMA["items_schema"])
MAX_TAGS: int = _TAGS_SCHEMA["max_length"]


def is_run_id(value: Any) -> bool:
    return isinstance(value, str) and _RUN_ID_RE.fullmatch(value) is not None


def extension_fields(event: Any, fields: dict[str, Any]) -> dict[str, Any] | None:
    """The fields of an event written as given (`Run.emit`): None, with a WARNING, for an
    invalid event name; fields that would overwrite the envelope are dropped, with a WARNING."""
    if not isinstance(event, str) or _EVENT_NAME.fullmatch(event) is None:
        logger.warning("trainwire: %r is not an event name (noun.verb); not written", event)
        return None
    clashing = _ENVELOPE_KEYS.intersection(fields)
    if clashing:
        logger.warning("trainwire: %s: envelope fields %s are set by the writer; ignored", event, sorted(clashing))
        fields = {name: value for name, value in fields.items() if name not in clashing}
    return fields


def checked_run_id(run_id: str | None, now: Callable[[], float]) -> str:
    """The run id given, or a new one made at `now()`; a bad one raises `ValueError` (the
    run cannot be made without one)."""
    if run_id is None:
        return new_run_id(now())
    if not is_run_id(run_id):
        raise ValueError(f"run_id must match {RUN_ID_PATTERN}, got {run_id!r}")
    return run_id


class Arguments:
    """Checks one run's arguments, reporting each that cannot be taken to `complain`."""

    def __init__(self, complain: Complaints) -> None:
        self.complain = complain

    def number(self, event: str, field: str, value: Any, minimum: float | None = None) -> Any:
        """A number field's value, or None (null) with a complaint when it is not a number."""
        checked = number(value, minimum)
        if checked is BAD:
            floor = "" if minimum is None else f" >= {minimum}"
            self.complain(f"{event}.{field}", f"{event}: {field}={value!r} is not a number{floor}; written as null")
            return None
        return checked

    def optional_int(self, event: str, field: str, value: Any, minimum: int = 0) -> int | None:
        """An integer field's value, or None (null) with a complaint when it is not an
        integer >= `minimum`."""
        checked = integer(value, minimum)
        if checked is BAD:
            self.complain(
                f"{event}.{field}", f"{event}: {field}={value!r} is not an integer >= {minimum}; written as null"
            )
            return None
        return checked

    def cycle_fields(self, cycle: Any, total_cycles: Any) -> dict[str, Any]:
        """`cycle` and `total_cycles` of a repeated phase as written: a cycle that is not an
        integer >= 1 is left out, a planned count that is not one is null (each with a complaint);
        `total_cycles` left `UNSET` is not written."""
        fields: dict[str, Any] = {}
        if cycle is not None:
            checked = integer(cycle, 1)
            if isinstance(checked, int):
                fields["cycle"] = checked
            else:
                self.complain("phase.started.cycle", f"cycle={cycle!r} is not an integer >= 1; left out")
        if total_cycles is not UNSET:
            fields["total_cycles"] = self.optional_int("phase.started", "total_cycles", total_cycles, 1)
        return fields

    def counts(self, event: str, **fields: tuple[Any, int]) -> dict[str, int] | None:
        """The required integer fields as integers, or None (the event is not written, the
        complaint says why) when one is not an integer >= its minimum."""
        counted = {}
        for field, (value, minimum) in fields.items():
            checked = integer(value, minimum)
            if not isinstance(checked, int):
                self.complain(
                    f"{event}.{field}",
                    f"{event}: {field}={value!r} is not an integer >= {minimum}; {event} not written",
                )
                return None
            counted[field] = checked
        return counted

    def one_of(self, kind: str, what: str, value: Any, allowed: Collection[str], outcome: str) -> bool:
        """Whether `value` is one of the contract's `allowed` values; when not, the complaint
        names them and says the `outcome`."""
        if value in allowed:
            return True
        self.complain(kind, f"{what} {value!r} is not one of {sorted(allowed)}; {outcome}")
        return False

    def trial(self, event: str, value: Any) -> int | None:
        """An explicit `trial=` as an integer >= 1, or None (the field is left out) with a complaint."""
        checked = integer(value, 1)
        if not isinstance(checked, int):
            self.complain(f"{event}.trial", f"{event}: trial={value!r} is not an integer >= 1; left out")
            return None
        return checked

    def phase_name(self, event: str, name: Any) -> bool:
        if isinstance(name, str) and _PHASE_RE.fullmatch(name):
            return True
        self.complain("phase name", f"phase name {name!r} does not match [a-z][a-z0-9_]{{0,63}}; {event} not written")
        return False

    def producer(self, producer: Mapping[str, Any] | None) -> dict[str, Any]:
        """The `producer` of `run.started`: as given when valid, else this package."""
        default = {"name": "trainwire", "version": __version__}
        if producer is None:
            return default
        given = dict(producer)
        name, version = given.get("name"), given.get("version")
        if isinstance(name, str) and 1 <= len(name) <= 128 and isinstance(version, str) and len(version) <= 64:
            return given
        self.complain(
            "producer",
            f"producer {producer!r} needs a name (1-128 characters) and a version (<= 64); the default is written",
        )
        return default

    def stage(self, stage: Mapping[str, Any] | None) -> dict[str, Any] | None:
        """The envelope's `stage`, its counts as integers, or None (left out) when invalid."""
        if stage is None:
            return None
        given = dict(stage)
        name, index, count = given.get("name"), integer(given.get("index"), 1), integer(given.get("count"), 1)
        if isinstance(name, str) and 1 <= len(name) <= 128 and isinstance(index, int) and isinstance(count, int):
            return {**given, "index": index, "count": count}
        self.complain(
            "stage", f"stage {stage!r} needs a name and an index and count >= 1; lines are written without it"
        )
        return None

    def run_name(self, name: Any) -> str | None:
        """The run's `name`, or None (left out) with a complaint when the contract cannot take it."""
        if name is None:
            return None
        return self._printable(_NAME, _NAME_SCHEMA["max_length"], "run.started.name", name, "name", "left out")

    def tags(self, tags: Any) -> list[str] | None:
        """The run's `tags` in their order without repeats (one string is one tag); a tag the
        contract cannot take, and any past the first `MAX_TAGS`, is dropped with a complaint."""
        if tags is None:
            return None
        given = [tags] if isinstance(tags, str) else tags
        try:
            items = list(given)
        except TypeError:
            self.complain("run.started.tags", f"tags {tags!r} is not a list of strings; left out")
            return None
        kept: list[str] = []
        limit = _TAGS_SCHEMA["items_schema"]["max_length"]
        for tag in items:
            checked = self._printable(_TAG, limit, "run.started.tags", tag, "tag", "dropped")
            if checked is not None and checked not in kept:
                kept.append(checked)
        if len(kept) > MAX_TAGS:
            self.complain(
                "run.started.tags count", f"{len(kept)} tags, at most {MAX_TAGS} are written; the rest dropped"
            )
            del kept[MAX_TAGS:]
        return kept

    def _printable(
        self, validator: SchemaValidator, limit: int, kind: str, value: Any, what: str, outcome: str
    ) -> str | None:
        """`value` when `validator` takes it (the contract's text rule: 1 to `limit` printable
        characters), else None with a complaint naming `what` it is and the `outcome`."""
        try:
            checked: str = validator.validate_python(value, strict=True)
        except ValidationError:
            self.complain(kind, f"{what} {value!r} is not 1-{limit} printable characters; {outcome}")
            return None
        return checked

    def heartbeat_interval(self, interval_s: Any) -> float | None:
        """The heartbeat interval in seconds, or None (no heartbeat) unless a positive number."""
        interval = number(interval_s, minimum=0)
        if interval is BAD or (interval is not None and not 0 < interval < float("inf")):
            self.complain(
                "heartbeat_interval_s", f"heartbeat_interval_s={interval_s!r} is not a positive number; no heartbeat"
            )
            interval = None
        return interval or None
