"""Incremental decoding of a trainwire stream: bytes in, validated events out (reader rules 1-2).

Bytes arrive in chunks split anywhere; complete lines are validated, the partial tail
is kept. A bad line is skipped with a `Diagnostic` and never stops the decoder (strict
mode raises instead). Checks 7-9 of the rules (after_finished, seq) need the runs and
belong to `trainwire.lines.state_fold`.

The hot path is one `KNOWN_EVENT_DICTS.validate_json(line)` per line (or, with the `fast`
extra, one msgspec call for a chunk's lines: `trainwire.contract.fast_known_events`): the
event as a validated dict (`validated()`); typed models are built only for a caller that
asks for them (`feed()`, `records()`). That validator is as strict as the JSON Schema on
every declared field (see `trainwire.contract.event_dicts`); what it cannot see (a bare
NaN/Infinity or nesting past the limit in a free-form value, `format: date-time`) is
checked on the bytes of a whole chunk at once, and a line in doubt goes to a slow path
that decides exactly, so this reader agrees with a JSON Schema validator byte for byte.

The exact checks of the slow path, and the byte tests that send a line there, are in
`trainwire.lines.exact_checks`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from itertools import count
from typing import Any

from pydantic import ValidationError

from trainwire._generated.contract import DiagnosticCode
from trainwire.contract.canonical import format_number
from trainwire.contract.errors import StreamError
from trainwire.contract.event_dicts import KNOWN_EVENT_DICTS, event_dict
from trainwire.contract.fast_known_events import fast_decoder
from trainwire.contract.known_event_dicts import KNOWN_EVENT_CORE_SCHEMA, plain_known_event
from trainwire.contract.line_bytes import DEFAULT_MAX_LINE_BYTES, MAX_NESTING, finite_tokens, shallow
from trainwire.lines.diagnostics import (
    DEFAULT_MAX_DIAGNOSTICS,
    Batch,
    Diagnostic,
    DiagnosticLog,
    Record,
    ValidatedRecord,
)
from trainwire.lines.exact_checks import (
    LONE_SURROGATE,
    PREVIEW_BYTES,
    contract_gap,
    first_error,
    integral_floats_to_int,
    is_integer,
    json_type,
    may_nest_too_deeply,
    nesting_depth,
    non_finite_field,
    parse_strict,
    preview,
    replace_lone_surrogates,
    restore_strings,
    trusted,
    typed,
    valid_timestamp,
)

__all__ = [
    "Batch",
    "DEFAULT_MAX_DIAGNOSTICS",
    "DEFAULT_MAX_LINE_BYTES",
    "MAX_NESTING",
    "Decoder",
    "Diagnostic",
    "DiagnosticLog",
    "Events",
    "Record",
    "ValidatedRecord",
    "nesting_depth",
    "parse_strict",
    "valid_timestamp",
]

logger = logging.getLogger("trainwire.lines.decoder")

_BOM = b"\xef\xbb\xbf"


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
            self._models = [typed(event) for event in self._dicts]
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
        return Events([event for _, events in self.batches(chunk) for event in events])

    def finish(self) -> None:
        """Mark the end of the stream. A partial tail is not an error: it stays counted, unparsed."""
        self._finished = True
        if self._tail_bytes:
            logger.debug("stream ended with a partial line of %d bytes", self._tail_bytes)

    close = finish

    def records(self, chunk: bytes) -> Iterator[Record]:
        """Decode a chunk lazily, yielding `(line_number, typed event)`; consume it fully."""
        for number, event in self.validated(chunk):
            yield number, typed(event)

    def validated(self, chunk: bytes) -> Iterator[ValidatedRecord]:
        """Decode a chunk lazily, yielding `(line_number, validated event dict)`; consume it fully.

        Diagnostics are appended as lines are reached, so a consumer that appends its own
        diagnostics to the same list between items keeps them in stream order.
        """
        for first, events in self.batches(chunk):
            yield from zip(count(first), events)

    def batches(self, chunk: bytes) -> Iterator[Batch]:
        """`validated` in batches of consecutive lines, `(first line's number, event dicts)`:
        a chunk's lines in one batch when no line is in doubt, else one line a batch, each
        yielded as its line is reached (diagnostics in stream order, as in `validated`)."""
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

    def _complete_lines(self, body: bytes) -> Iterator[Batch]:
        """Lines entirely inside one chunk (the common case): all at once when none is in doubt."""
        events = self._unquestionable(body)
        if events is not None:
            yield self.lines + 1, events
            self.lines += len(events)
            self.consumed_bytes += len(body) + 1
            return
        yield from self._line_by_line(body, body.split(b"\n"))

    def _unquestionable(self, body: bytes) -> list[dict[str, Any]] | None:
        """The lines' events when every line is a known event and no line needs the slow path's
        checks (judged on the bytes of the whole body at once); None to go line by line."""
        if len(body) > self.max_line_bytes and max(map(len, body.split(b"\n"))) > self.max_line_bytes:
            return None
        if not finite_tokens(body) or may_nest_too_deeply(body):
            return None
        if _fast_body is not None:
            events = _fast_body(body)
            if events is not None:
                return events
        try:
            return list(map(_validate_known, body.split(b"\n")))
        except (ValidationError, TypeError):
            return None  # a blank, bad or unknown line: each line gets its own answer

    def _line_by_line(self, body: bytes, lines: list[bytes]) -> Iterator[Batch]:
        """The careful loop: each line decided on its own, diagnostics in line order."""
        limit = self.max_line_bytes
        may_exceed_limit = len(body) > limit
        number = self.lines
        for content in lines:
            number += 1
            event = None if may_exceed_limit and len(content) > limit else _plain_known_event(content)
            if event is None:
                # anything unusual: a blank or bad line, a free-form NaN, a new hour
                self.lines = number
                event = self._decode(content)
            if event is not None:
                yield number, [event]
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
            self._overlong_head = b"".join(self._parts)[:PREVIEW_BYTES]
            self._parts = []

    def _complete_partial(self, segment: bytes) -> Iterator[Batch]:
        self.lines += 1
        self.consumed_bytes += self._tail_bytes + len(segment) + 1
        length = self._partial_len + len(segment)
        head = self._overlong_head
        if head is None and length <= self.max_line_bytes:
            content = b"".join(self._parts) + segment if self._parts else segment
        else:
            content = None
            if head is None:
                head = (b"".join(self._parts) + segment)[:PREVIEW_BYTES]
        self._parts = []
        self._partial_len = 0
        self._tail_bytes = 0
        self._overlong_head = None
        if content is None:
            self._report(
                "line_too_long",
                f"the line is {length} bytes, over the limit of {self.max_line_bytes}: {preview(head or b'')}",
            )
            return
        event = _plain_known_event(content) or self._decode(content)
        if event is not None:
            yield self.lines, [event]

    # checks

    def _decode(self, content: bytes) -> dict[str, Any] | None:
        """Check one complete line (without its newline); None when it is blank or skipped."""
        event = self._decode_model(content)
        return None if event is None else event_dict(event)

    def _decode_model(self, content: bytes) -> Any | None:
        """The slow path on typed models: every line the hot loop does not vouch for."""
        from trainwire.contract.models import EVENT_ADAPTER  # ~150 ms to import: only for a line the hot loop left

        if len(content) > self.max_line_bytes:
            self._report(
                "line_too_long",
                f"the line is {len(content)} bytes, over the limit of {self.max_line_bytes}: {preview(content)}",
            )
            return None
        if content[-1:] == b"\r":
            content = content[:-1]
        try:
            event = EVENT_ADAPTER.validate_json(content, strict=True)
        except (ValidationError, TypeError):
            event = None
        if event is not None and trusted(content, event):
            return event
        try:
            return self._decode_exactly(content)
        except _Skip as skip:
            self._report(skip.code, skip.message)
            return None

    def _decode_exactly(self, content: bytes) -> Any | None:
        """The slow path: find out exactly why pydantic's fast answer cannot be trusted."""
        from trainwire.contract.models import EVENT_ADAPTER, UnknownEvent

        if not content.strip(b" \t"):
            return None  # blank: counted, otherwise ignored
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError as error:
            raise _Skip("invalid_utf8", f"invalid UTF-8 at byte {error.start}: {preview(content)}") from None
        try:
            value = parse_strict(text)
        except ValueError as error:
            raise _Skip("invalid_json", f"not JSON ({error}): {preview(content)}") from None
        except RecursionError:
            raise _Skip("invalid_json", f"JSON nested deeper than {MAX_NESTING} levels: {preview(content)}") from None
        if not shallow(content) and nesting_depth(value) > MAX_NESTING:
            raise _Skip("invalid_json", f"JSON nested deeper than {MAX_NESTING} levels: {preview(content)}")
        if not isinstance(value, dict):
            raise _Skip("schema_violation", f"the line is a JSON {json_type(value)}, not an object: {preview(content)}")
        version = value.get("schema_version")
        if is_integer(version) and version > 1:
            raise _Skip(
                "unsupported_version", f"schema_version {format_number(version)} is newer than 1: {preview(content)}"
            )
        if version is True:
            raise _Skip("schema_violation", f"schema_version must be the integer 1, not true: {preview(content)}")
        value = integral_floats_to_int(value)
        lone_surrogates = LONE_SURROGATE.search(text) is not None
        try:
            if lone_surrogates:
                # pydantic cannot hold a lone surrogate in a typed string; the schema allows it.
                event = restore_strings(
                    EVENT_ADAPTER.validate_python(replace_lone_surrogates(value), strict=True), value
                )
            else:
                event = EVENT_ADAPTER.validate_python(value, strict=True)
        except ValidationError as error:
            raise _Skip("schema_violation", f"{first_error(error)}: {preview(content)}") from None
        except (TypeError, RecursionError):
            # the models' discriminator cannot hash an `event` that is an object or array
            raise _Skip("schema_violation", f"event must be a string: {preview(content)}") from None
        problem = contract_gap(event)
        if problem is None and not isinstance(event, UnknownEvent):
            field = non_finite_field(event, "")
            problem = f"{field} is not a finite number" if field else None
        if problem is not None:
            raise _Skip("schema_violation", f"{problem}: {preview(content)}")
        return event

    def _report(self, code: DiagnosticCode, message: str) -> None:
        if self.strict:
            raise StreamError(self.lines, code, message)
        self.diagnostics.append(Diagnostic(self.lines, code, message))


#: a line (JSON bytes) into the validated dict of a known event; raises when it is not one
_validate_known = KNOWN_EVENT_DICTS.validate_json
#: a body of lines into their validated dicts in one call when the `fast` extra is installed
#: (None without it), else None for the line-by-line validator to decide
_fast_body = fast_decoder(KNOWN_EVENT_CORE_SCHEMA)
#: the event of a line the slow path need not see, else None (shared with the writer's line check)
_plain_known_event = plain_known_event
