"""What the decoder hands on, without the models it validates with: its records and
batches, and the diagnostics the decoder and the run-state fold share. The fold (and the
writer's journal that runs it) imports these alone; the decoder re-exports them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from trainwire._generated.contract import DiagnosticCode

__all__ = ["DEFAULT_MAX_DIAGNOSTICS", "Batch", "Diagnostic", "DiagnosticLog", "Record", "ValidatedRecord"]

#: the diagnostics a reader lists; the others are counted in `diagnostics_dropped`
DEFAULT_MAX_DIAGNOSTICS = 1000

#: (line number, typed event)
Record = tuple[int, Any]
#: (line number, validated event dict)
ValidatedRecord = tuple[int, dict[str, Any]]
#: (first line's number, validated event dicts of consecutive lines): what the decoder hands to the run-state fold
Batch = tuple[int, list[dict[str, Any]]]


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
