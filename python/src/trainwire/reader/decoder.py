"""Incremental decoding of a trainwire stream: bytes in, validated events out (reader rules 1-2).

Bytes arrive in chunks split anywhere; complete lines are validated, the partial tail
is kept. A bad line is skipped with a `Diagnostic` and never stops the decoder (strict
mode raises instead). Checks 7-9 of the rules (after_finished, seq) need the runs and
belong to `trainwire.reader.state`.

The hot path is one `KNOWN_EVENT_DICTS.validate_json(line, strict=True)` per line: the
event as a validated dict (`validated()`); typed models are built only for a caller that
asks for them (`feed()`, `records()`). pydantic is more lenient than the JSON Schema in a few places (bare NaN/Infinity, `true` for
`schema_version: 1`, an explicit `null` for an optional field that is not nullable,
`format: date-time`); cheap byte checks route those lines to a slow path that decides
exactly, so this reader agrees with a JSON Schema validator byte for byte.

Longer than the reader's other modules: the framing, the fast path and the exact slow path
it falls back to are kept side by side, because they must agree line for line (the tests
compare whole chunks with one line at a time).
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, TypeGuard, get_args

from pydantic import BaseModel, ValidationError

from trainwire._generated import events as generated_events
from trainwire._generated.contract import NULL_RULES, DiagnosticCode, NullRule
from trainwire.contract.canonical import format_number
from trainwire.contract.errors import StreamError
from trainwire.contract.event_dicts import KNOWN_EVENT_DICTS, event_dict, event_model
from trainwire.contract.models import EVENT_ADAPTER, EVENT_MODELS, Envelope, UnknownEvent

__all__ = [
    "DEFAULT_MAX_DIAGNOSTICS",
    "DEFAULT_MAX_LINE_BYTES",
    "MAX_NESTING",
    "Decoder",
    "Diagnostic",
    "DiagnosticLog",
    "Events",
    "Record",
    "ValidatedRecord",
    "parse_strict",
    "valid_timestamp",
]

logger = logging.getLogger("trainwire.reader.decoder")

DEFAULT_MAX_LINE_BYTES = 1 << 20
#: the deepest a line may nest (its object is level 1): deeper is `invalid_json` (reader rule 2.3)
MAX_NESTING = 128
#: the diagnostics a reader lists; the others are counted in `diagnostics_dropped`
DEFAULT_MAX_DIAGNOSTICS = 1000
_BOM = b"\xef\xbb\xbf"
_PREVIEW_CHARS = 80
#: enough bytes for 80 characters of UTF-8
_PREVIEW_BYTES = 4 * _PREVIEW_CHARS

#: (line number, typed event)
Record = tuple[int, Any]
#: (line number, validated event dict): what the decoder hands to the run-state fold
ValidatedRecord = tuple[int, dict[str, Any]]


class Events(Sequence[Any]):
    """Typed events of validated dicts, each model built the first time it is read.

    A caller that only folds or counts never pays for model instances.
    """

    __slots__ = ("_dicts", "_models")

    def __init__(self, dicts: list[dict[str, Any]]) -> None:
        self._dicts = dicts
        self._models: list[Any] | None = None

    @property
    def dicts(self) -> list[dict[str, Any]]:
        """The validated dicts themselves (do not change them)."""
        return self._dicts

    def _built(self) -> list[Any]:
        if self._models is None:
            self._models = [_typed(event) for event in self._dicts]
        return self._models

    def __len__(self) -> int:
        return len(self._dicts)

    def __getitem__(self, index: Any) -> Any:
        return self._built()[index]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._built())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Events):
            other = other._built()
        return isinstance(other, (list, tuple)) and self._built() == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __add__(self, other: Sequence[Any]) -> list[Any]:
        return self._built() + list(other)

    def __radd__(self, other: Sequence[Any]) -> list[Any]:
        return list(other) + self._built()

    def __repr__(self) -> str:
        return f"Events({self._built()!r})"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """A problem with one line: its number (from 1), a code, a readable message."""

    line: int
    code: DiagnosticCode
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"line": self.line, "code": self.code, "message": self.message}


class DiagnosticLog(list[Diagnostic]):
    """The first `limit` diagnostics, the others counted: a stream of bad lines cannot exhaust memory.

    A list, so that the decoder and the fold share it as they shared a plain one.
    """

    def __init__(self, limit: int = DEFAULT_MAX_DIAGNOSTICS) -> None:
        super().__init__()
        self.limit = limit
        #: diagnostics found beyond `limit`
        self.dropped = 0

    def append(self, diagnostic: Diagnostic) -> None:
        if len(self) < self.limit:
            super().append(diagnostic)
        else:
            self.dropped += 1

    def extend(self, diagnostics: Iterable[Diagnostic]) -> None:
        for diagnostic in diagnostics:
            self.append(diagnostic)


class _Skip(Exception):
    """Internal: the line is skipped with this code and message."""

    def __init__(self, code: DiagnosticCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Decoder:
    """Turns chunks of bytes into typed events, one complete line at a time.

    `offset` and `line_number` resume a stream read earlier: pass the `consumed_bytes`
    and `lines` it reported and feed the bytes from that offset on.
    """

    def __init__(
        self,
        *,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        strict: bool = False,
        offset: int = 0,
        line_number: int = 0,
        diagnostics: list[Diagnostic] | None = None,
    ) -> None:
        if max_line_bytes < 1:
            raise ValueError("max_line_bytes must be at least 1")
        self.max_line_bytes = max_line_bytes
        self.strict = strict
        #: every problem found, in stream order (a list the caller may share)
        self.diagnostics: list[Diagnostic] = [] if diagnostics is None else diagnostics
        #: the offset just after the last complete line: where to resume
        self.consumed_bytes = offset
        #: complete lines seen, blank and skipped ones included
        self.lines = line_number
        self._parts: list[bytes] = []  # the partial line's content so far
        self._partial_len = 0  # its length, discarded bytes of an overlong line included
        self._tail_bytes = 0  # raw bytes after the last newline (a BOM included)
        self._overlong_head: bytes | None = None  # start of a line over the limit, kept for the message
        self._bom_probe: bytes | None = b"" if offset == 0 else None
        self._finished = False

    @property
    def partial_tail_bytes(self) -> int:
        """Bytes after the last newline: a line still being written, or torn."""
        return self._tail_bytes

    def feed(self, chunk: bytes) -> Events:
        """Decode a chunk; return the typed events of the lines it completed."""
        return Events([event for _, event in self.validated(chunk)])

    def finish(self) -> None:
        """Mark the end of the stream. A partial tail is not an error: it stays counted, unparsed."""
        self._finished = True
        if self._tail_bytes:
            logger.debug("stream ended with a partial line of %d bytes", self._tail_bytes)

    close = finish

    def records(self, chunk: bytes) -> Iterator[Record]:
        """Decode a chunk lazily, yielding `(line_number, typed event)`; consume it fully."""
        for number, event in self.validated(chunk):
            yield number, _typed(event)

    def validated(self, chunk: bytes) -> Iterator[ValidatedRecord]:
        """Decode a chunk lazily, yielding `(line_number, validated event dict)`; consume it fully.

        Diagnostics are appended as lines are reached, so a consumer that appends its own
        diagnostics to the same list between items keeps them in stream order.
        """
        if self._finished:
            raise ValueError("the decoder was finished; create a new one to read more")
        if self._bom_probe is not None:
            chunk = self._strip_bom(chunk)
            if not chunk:
                return
        first_newline = chunk.find(b"\n")
        if first_newline < 0:
            self._extend_partial(chunk)
            return
        yield from self._complete_partial(chunk[:first_newline])
        last_newline = chunk.rfind(b"\n")
        if last_newline > first_newline:
            yield from self._complete_lines(chunk[first_newline + 1 : last_newline])
        self._extend_partial(chunk[last_newline + 1 :])

    def _complete_lines(self, body: bytes) -> Iterator[ValidatedRecord]:
        """Lines entirely inside one chunk (the common case): all at once when none is in doubt."""
        lines = body.split(b"\n")
        events = self._unquestionable(body, lines)
        if events is not None:
            first = self.lines + 1
            yield from zip(range(first, first + len(events)), events)
            self.lines += len(events)
            self.consumed_bytes += len(body) + 1
            return
        yield from self._line_by_line(body, lines)

    def _unquestionable(self, body: bytes, lines: list[bytes]) -> list[dict[str, Any]] | None:
        """The lines' events when every line is a known event and no line needs the slow path's
        checks (judged on the bytes of the whole body at once); None to go line by line."""
        if len(body) > self.max_line_bytes and max(map(len, lines)) > self.max_line_bytes:
            return None
        if b"NaN" in body or b"Infinity" in body or b"true" in body or _may_overflow(body):
            return None
        if b"null" in body and _NULL_NOT_ALLOWED.search(body):
            return None
        if _may_nest_too_deeply(body):
            return None
        validate = KNOWN_EVENT_DICTS.validate_json
        try:
            events = [validate(line, strict=True) for line in lines]
        except (ValidationError, TypeError):
            return None  # a blank, bad or unknown line: each line gets its own answer
        return events if _valid_times({event["ts"] for event in events}) else None

    def _line_by_line(self, body: bytes, lines: list[bytes]) -> Iterator[ValidatedRecord]:
        """The careful loop: each line decided on its own, diagnostics in line order."""
        validate = KNOWN_EVENT_DICTS.validate_json
        limit = self.max_line_bytes
        may_exceed_limit = len(body) > limit
        valid_hours = _VALID_HOURS
        valid_minutes_seconds = _VALID_MINUTES_SECONDS
        infinity = _INFINITY
        number = self.lines
        for content in lines:
            number += 1
            # A trailing `\r` is JSON whitespace to pydantic: no need to strip it here.
            if not (may_exceed_limit and len(content) > limit):
                try:
                    event = validate(content, strict=True)
                except (ValidationError, TypeError):
                    pass
                else:
                    ts = event["ts"]
                    if ts[:13] in valid_hours and ts[14:19] in valid_minutes_seconds:
                        # Every valid line has one `u` in its `run_id` key; a `true` or `null`
                        # token adds another. Counting one byte is cheaper than two searches.
                        if (
                            _shallow(content)
                            and b"N" not in content
                            and b"I" not in content
                            and content.count(b"u") == 1
                            and event["event"] == "train.step"
                            and infinity not in event.values()
                            and -infinity not in event.values()
                            and ("metrics" not in event or _finite_values(event["metrics"]))
                        ):
                            yield number, event
                            continue
                        if _trusted_dict(content, event):
                            yield number, event
                            continue
            # anything unusual: a blank or bad line, a lenient pydantic answer, a new hour
            self.lines = number
            event = self._decode(content)
            if event is not None:
                yield number, event
        self.lines = number
        self.consumed_bytes += len(body) + 1

    # framing

    def _strip_bom(self, chunk: bytes) -> bytes:
        probe = self._bom_probe + chunk  # type: ignore[operator]
        if len(probe) < len(_BOM) and _BOM.startswith(probe):
            self._bom_probe = probe
            self._tail_bytes += len(chunk)
            return b""
        self._bom_probe = None
        self._tail_bytes -= len(probe) - len(chunk)  # the probe's bytes are counted again below
        if probe.startswith(_BOM):
            self._tail_bytes += len(_BOM)  # part of the first line's bytes, not of its content
            return probe[len(_BOM) :]
        return probe

    def _extend_partial(self, data: bytes) -> None:
        if not data:
            return
        self._tail_bytes += len(data)
        self._partial_len += len(data)
        if self._overlong_head is not None:
            return
        self._parts.append(data)
        if self._partial_len > self.max_line_bytes:
            # Never hold a line over the limit: keep its start for the message only.
            self._overlong_head = b"".join(self._parts)[:_PREVIEW_BYTES]
            self._parts = []

    def _complete_partial(self, segment: bytes) -> Iterator[ValidatedRecord]:
        self.lines += 1
        self.consumed_bytes += self._tail_bytes + len(segment) + 1
        length = self._partial_len + len(segment)
        head = self._overlong_head
        if head is None and length <= self.max_line_bytes:
            content = b"".join(self._parts) + segment if self._parts else segment
        else:
            content = None
            if head is None:
                head = (b"".join(self._parts) + segment)[:_PREVIEW_BYTES]
        self._parts = []
        self._partial_len = 0
        self._tail_bytes = 0
        self._overlong_head = None
        if content is None:
            self._report("line_too_long", f"the line is {length} bytes, over the limit of {self.max_line_bytes}: {_preview(head)}")  # type: ignore[arg-type]
            return
        event = self._decode(content)
        if event is not None:
            yield self.lines, event

    # checks

    def _decode(self, content: bytes) -> dict[str, Any] | None:
        """Check one complete line (without its newline); None when it is blank or skipped."""
        event = self._decode_model(content)
        return None if event is None else event_dict(event)

    def _decode_model(self, content: bytes) -> Any | None:
        """The slow path on typed models: every line the hot loop does not vouch for."""
        if len(content) > self.max_line_bytes:
            self._report("line_too_long", f"the line is {len(content)} bytes, over the limit of {self.max_line_bytes}: {_preview(content)}")
            return None
        if content[-1:] == b"\r":
            content = content[:-1]
        try:
            event = EVENT_ADAPTER.validate_json(content, strict=True)
        except (ValidationError, TypeError):
            event = None
        if event is not None and _trusted(content, event):
            return event
        try:
            return self._decode_exactly(content)
        except _Skip as skip:
            self._report(skip.code, skip.message)
            return None

    def _decode_exactly(self, content: bytes) -> Any | None:
        """The slow path: find out exactly why pydantic's fast answer cannot be trusted."""
        if not content.strip(b" \t"):
            return None  # blank: counted, otherwise ignored
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError as error:
            raise _Skip("invalid_utf8", f"invalid UTF-8 at byte {error.start}: {_preview(content)}") from None
        try:
            value = parse_strict(text)
        except ValueError as error:
            raise _Skip("invalid_json", f"not JSON ({error}): {_preview(content)}") from None
        except RecursionError:
            raise _Skip("invalid_json", f"JSON nested deeper than {MAX_NESTING} levels: {_preview(content)}") from None
        if not _shallow(content) and nesting_depth(value) > MAX_NESTING:
            raise _Skip("invalid_json", f"JSON nested deeper than {MAX_NESTING} levels: {_preview(content)}")
        if not isinstance(value, dict):
            raise _Skip("schema_violation", f"the line is a JSON {_json_type(value)}, not an object: {_preview(content)}")
        version = value.get("schema_version")
        if _is_integer(version) and version > 1:
            raise _Skip("unsupported_version", f"schema_version {format_number(version)} is newer than 1: {_preview(content)}")
        if version is True:
            raise _Skip("schema_violation", f"schema_version must be the integer 1, not true: {_preview(content)}")
        value = _integral_floats_to_int(value)
        lone_surrogates = _LONE_SURROGATE.search(text) is not None
        try:
            if lone_surrogates:
                # pydantic cannot hold a lone surrogate in a typed string; the schema allows it.
                event = _restore_strings(EVENT_ADAPTER.validate_python(_replace_lone_surrogates(value), strict=True), value)
            else:
                event = EVENT_ADAPTER.validate_python(value, strict=True)
        except ValidationError as error:
            raise _Skip("schema_violation", f"{_first_error(error)}: {_preview(content)}") from None
        except (TypeError, RecursionError):
            # the models' discriminator cannot hash an `event` that is an object or array
            raise _Skip("schema_violation", f"event must be a string: {_preview(content)}") from None
        problem = _contract_gap(event)
        if problem is None and not isinstance(event, UnknownEvent):
            field = _non_finite_field(event, "")
            problem = f"{field} is not a finite number" if field else None
        if problem is not None:
            raise _Skip("schema_violation", f"{problem}: {_preview(content)}")
        return event

    def _report(self, code: DiagnosticCode, message: str) -> None:
        if self.strict:
            raise StreamError(self.lines, code, message)
        self.diagnostics.append(Diagnostic(self.lines, code, message))


# helpers of the slow path


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_strict(text: str) -> Any:
    """`json.loads` without the NaN/Infinity extension Python accepts by default."""
    return json.loads(text, parse_constant=_reject_constant)


#: every byte but `{`, `[` and the newline, deleted to count a body's openings line by line
_NOT_AN_OPENING = bytes(byte for byte in range(256) if byte not in b"{[\n")


def _may_nest_too_deeply(body: bytes) -> bool:
    """`not _shallow(line)` for some line of `body`, for all its lines at once."""
    openings = body.translate(None, _NOT_AN_OPENING)
    return len(openings) > MAX_NESTING and max(map(len, openings.split(b"\n"))) > MAX_NESTING


def _shallow(content: bytes) -> bool:
    """Too few brackets to nest past the limit: the cheap test that spares most lines a walk."""
    return content.count(b"{") + content.count(b"[") <= MAX_NESTING


def nesting_depth(value: Any) -> int:
    """How deep a parsed JSON value nests: 0 for a scalar, 1 for a flat object or array."""
    deepest = 0
    pending = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, depth)
        pending.extend((child, depth + 1) for child in children)
    return deepest


def _is_integer(value: Any) -> TypeGuard[int | float]:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array"


def _integral_floats_to_int(value: Any) -> Any:
    """`5.0` is the integer 5 (JSON Schema's rule, the only one JavaScript can apply)."""
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if isinstance(value, dict):
        return {key: _integral_floats_to_int(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_integral_floats_to_int(item) for item in value]
    return value


#: a `\\uD800`-`\\uDFFF` escape: the text may hold a lone surrogate once parsed
_LONE_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE_CHARACTER = re.compile("[\ud800-\udfff]")


def _replace_lone_surrogates(value: Any) -> Any:
    """The value with each lone surrogate replaced by U+FFFD: one code point for one, as the schema counts."""
    if isinstance(value, str):
        return _SURROGATE_CHARACTER.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_replace_lone_surrogates(key): _replace_lone_surrogates(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_replace_lone_surrogates(item) for item in value]
    return value


def _restore_strings(model: Any, original: dict[str, Any]) -> Any:
    """Puts the original values (lone surrogates and all) back into the validated model."""
    for name in [*type(model).model_fields, *(model.model_extra or ())]:
        if name not in original or _replace_lone_surrogates(original[name]) == original[name]:
            continue
        current = getattr(model, name)
        if isinstance(current, BaseModel) and isinstance(original[name], dict):
            _restore_strings(current, original[name])
        else:
            setattr(model, name, original[name])
    return model


def _typed(event: dict[str, Any]) -> Any:
    """The typed event of a validated dict; one holding lone surrogates as the slow path built it."""
    try:
        return event_model(event)
    except ValidationError:
        return _restore_strings(event_model(_replace_lone_surrogates(event)), event)


def _first_error(error: ValidationError) -> str:
    first = error.errors(include_url=False)[0]
    location = [str(part) for part in first["loc"]]
    if location and location[0] == "unknown":
        location[0] = "envelope"
    where = ".".join(location) or "line"
    more = error.error_count() - 1
    return f"{where}: {first['msg']}" + (f" (and {more} more)" if more else "")


def _preview(content: bytes) -> str:
    """The start of the offending text (at most 80 characters) as a JSON string."""
    text = content[:_PREVIEW_BYTES].decode("utf-8", "replace")
    cut = len(text) > _PREVIEW_CHARS or len(content) > _PREVIEW_BYTES
    return json.dumps(text[:_PREVIEW_CHARS], ensure_ascii=False) + ("..." if cut else "")


# where pydantic accepts what the JSON Schema rejects


def _trusted(content: bytes, event: Any) -> bool:
    """Whether pydantic's acceptance of the line stands as the JSON Schema's answer."""
    if b"NaN" in content or b"Infinity" in content or b"true" in content:
        return False  # bare non-finite tokens; `true` taken for `schema_version: 1`
    if not _shallow(content) or _may_overflow(content):
        return False
    return _contract_gap(event) is None


def _trusted_dict(content: bytes, event: dict[str, Any]) -> bool:
    """`_trusted` for a known event validated into a dict whose `ts` hour was seen valid."""
    if b"NaN" in content or b"Infinity" in content or b"true" in content:
        return False
    if not _shallow(content) or _may_overflow(content):
        return False
    return not _has_explicit_null(event, _NULL_RULE_OF_EVENT[event["event"]])


_INFINITY = math.inf

#: every digit as `0`, so that a run of digits is found by a plain substring search
_DIGITS_AS_ZEROS = bytes.maketrans(b"0123456789", b"0" * 10)
_DIGIT_RUN_THAT_MAY_OVERFLOW = b"0" * 309  # 1e308 is the largest double's order


def _may_overflow(body: bytes) -> bool:
    """Whether a number in `body` may overflow a double (a positive exponent, or 309 digits
    in a row, as in an integer literal beyond 1.8e308): for a whole body or one line."""
    if b"E" in body or b"e+" in body:
        return True
    digits_as_zeros = body.translate(_DIGITS_AS_ZEROS)
    return b"e0" in digits_as_zeros or _DIGIT_RUN_THAT_MAY_OVERFLOW in digits_as_zeros


def _valid_times(stamps: set[str]) -> bool:
    """Every `ts` (already matching the contract's pattern) is a valid date-time: checked
    once per minute, seconds to 59 (a leap second takes the slow path)."""
    if max({ts[17:19] for ts in stamps}) > "59":
        return False
    return all(minute[:13] in _VALID_HOURS and minute[14:16] <= "59" or valid_timestamp(minute + ":00")
               for minute in {ts[:16] for ts in stamps})


def _finite_values(values: dict[str, Any]) -> bool:
    """No number overflowed to infinity (`1e400`): the hot path's share of `_trusted` for steps."""
    return _INFINITY not in values.values() and -_INFINITY not in values.values()


def _non_finite_field(value: Any, path: str) -> str | None:
    """The first declared number holding an infinite value (an overflowing literal), if any.

    Unknown fields and free-form objects (`config`) are left alone: the schema says nothing
    of their values, so they are kept as they are, as a JavaScript reader keeps them.
    """
    if isinstance(value, float):
        return path if not math.isfinite(value) else None
    if isinstance(value, BaseModel):
        for name in _typed_fields(type(value)):
            found = _non_finite_field(getattr(value, name), f"{path}/{name}")
            if found:
                return found
    elif isinstance(value, dict):
        for key, item in value.items():
            found = _non_finite_field(item, f"{path}/{key}")
            if found:
                return found
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            found = _non_finite_field(item, f"{path}/{index}")
            if found:
                return found
    return None


@lru_cache(maxsize=None)
def _typed_fields(model: type[BaseModel]) -> tuple[str, ...]:
    """The fields whose schema types their values (not `Any` anywhere in the annotation)."""
    return tuple(name for name, field in model.model_fields.items() if not _holds_any(field.annotation))


def _holds_any(annotation: Any) -> bool:
    return annotation is Any or any(_holds_any(argument) for argument in get_args(annotation))


def _contract_gap(event: Any) -> str | None:
    if not valid_timestamp(event.ts):
        return f"ts {event.ts!r} is not a valid RFC 3339 date-time"
    return _explicit_null(event, "")


_DAYS_IN_MONTH = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


#: `YYYY-MM-DDTHH` prefixes seen valid, so the hot loop checks a timestamp with two lookups
_VALID_HOURS: set[str] = set()
_VALID_MINUTES_SECONDS = frozenset(f"{minute:02d}:{second:02d}" for minute in range(60) for second in range(60))


def valid_timestamp(ts: str) -> bool:
    """`format: date-time` for a string that already matches the contract's timestamp pattern.

    As ajv-formats checks it: a real calendar date, hours to 23, minutes and seconds to 59,
    and a leap second (`:60`) only at 23:59 UTC.
    """
    if not _valid_date(ts[:10]):
        return False
    hours, minutes, seconds = ts[11:13], ts[14:16], ts[17:19]
    if hours <= "23" and minutes <= "59" and seconds <= "59":
        if len(_VALID_HOURS) < 65536:
            _VALID_HOURS.add(ts[:13])
        return True
    return hours == "23" and minutes == "59" and seconds == "60"


def _valid_date(date: str) -> bool:
    year, month, day = int(date[0:4]), int(date[5:7]), int(date[8:10])
    if not 1 <= month <= 12:
        return False
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    days = 29 if month == 2 and leap else _DAYS_IN_MONTH[month - 1]
    return 1 <= day <= days


def _explicit_null(model: BaseModel, prefix: str) -> str | None:
    rule = _NULL_RULES.get(type(model))
    if rule is None:
        return None
    given = model.model_fields_set
    for name in rule.not_nullable:
        if name in given and getattr(model, name) is None:
            return f"{prefix}{name} may be absent but not null"
    for name in rule.nested:
        value = getattr(model, name)
        if isinstance(value, BaseModel):
            problem = _explicit_null(value, f"{prefix}{name}.")
            if problem is not None:
                return problem
    return None


def _model_named(title: str) -> type[BaseModel]:
    """The model of a schema object: an unknown event is checked by the envelope's rule."""
    model: type[BaseModel] = UnknownEvent if title == Envelope.__name__ else getattr(generated_events, title)
    return model


#: the optional fields the schema forbids to be null, by model (generated from the schema)
_NULL_RULES: dict[type[BaseModel], NullRule] = {_model_named(title): rule for title, rule in NULL_RULES.items()}
#: the same rules by event name, for validated dicts of known events
_NULL_RULE_OF_EVENT: dict[str, NullRule | None] = {name: NULL_RULES.get(model.__name__) for name, model in EVENT_MODELS.items()}


#: `"name": null` for a field the schema forbids to be null (a whole-body check, any nesting)
_NULL_NOT_ALLOWED = re.compile(
    rb'"(?:' + b"|".join(sorted({re.escape(name).encode() for rule in NULL_RULES.values() for name in rule.not_nullable})) + rb')"\s*:\s*null'
)


def _has_explicit_null(value: dict[str, Any], rule: NullRule | None) -> bool:
    """`_explicit_null` for a validated dict: a key is present exactly when the field is set."""
    if rule is None:
        return False
    for name in rule.not_nullable:
        if name in value and value[name] is None:
            return True
    for name, title in rule.nested.items():
        nested = value.get(name)
        if isinstance(nested, dict) and _has_explicit_null(nested, NULL_RULES.get(title)):
            return True
    return False
