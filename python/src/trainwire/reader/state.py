"""The stream reader: the decoder and the run-state fold (`lines.state_fold`) together, and
the reader state they give. The state is the conformance reference: `StreamReader.to_json()`
is byte-identical to what the TypeScript reader produces for the same bytes (apart from
diagnostic texts).
"""

from __future__ import annotations

from typing import Any

from trainwire.contract import canonical
from trainwire.contract.collector import collector_paused
from trainwire.lines.decoder import (
    DEFAULT_MAX_DIAGNOSTICS,
    DEFAULT_MAX_LINE_BYTES,
    Decoder,
    DiagnosticLog,
    Events,
)
from trainwire.lines.reader_state import Now, reader_state
from trainwire.lines.run_table import run_table_html
from trainwire.lines.state_fold import RunState, RunStateFold

__all__ = [
    "RunState",
    "RunStateFold",
    "StreamReader",
    "read_state",
    "reader_state",
    "run_table_html",
]


class StreamReader:
    """A decoder and a run-state fold together: feed bytes, read the state.

    ```python
    reader = StreamReader()
    for chunk in chunks:
        reader.feed(chunk)
    print(reader.to_json(now="2026-11-29T10:00:00Z"))
    ```
    """

    def __init__(
        self,
        *,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        strict: bool = False,
        offset: int = 0,
        line_number: int = 0,
        resume: dict[str, Any] | None = None,
        max_diagnostics: int = DEFAULT_MAX_DIAGNOSTICS,
    ) -> None:
        """`resume`: a saved `to_dict()`; reading goes on at its `consumed_bytes` with its runs
        (overriding `offset` and `line_number`), so sequence gaps and staleness are still detected.
        `max_diagnostics`: the state lists the first ones and counts the rest."""
        self.diagnostics = DiagnosticLog(max_diagnostics)
        self.decoder = Decoder(
            max_line_bytes=max_line_bytes,
            strict=strict,
            offset=offset if resume is None else resume["consumed_bytes"],
            line_number=line_number if resume is None else resume["lines"],
            diagnostics=self.diagnostics,
        )
        self.fold = RunStateFold(strict=strict, diagnostics=self.diagnostics, resume=resume)

    def feed(self, chunk: bytes) -> Events:
        """Decode and fold a chunk; return the typed events applied to runs (built when read)."""
        with collector_paused():  # a chunk's thousands of dicts hold no cycle: no pass over them
            return Events(self.fold.extend_batches(self.decoder.batches(chunk)))

    def finish(self) -> None:
        """The stream ended; a partial tail stays counted and unparsed."""
        self.decoder.finish()

    @property
    def runs(self) -> list[RunState]:
        return list(self.fold.runs.values())

    def run(self, run_id: str) -> RunState | None:
        return self.fold.runs.get(run_id)

    def latest_run(self) -> RunState | None:
        """The run whose first line came last (in a file holding several runs, the newest)."""
        return next(reversed(self.fold.runs.values()), None)

    @property
    def lines(self) -> int:
        return self.decoder.lines

    @property
    def consumed_bytes(self) -> int:
        return self.decoder.consumed_bytes

    @property
    def partial_tail_bytes(self) -> int:
        return self.decoder.partial_tail_bytes

    def to_dict(self, now: Now = None, stale_after_s: float | None = None) -> dict[str, Any]:
        """The reader state (schemas/reader-state/v1); `now` turns silent runs `stale`."""
        return reader_state(
            self.fold,
            lines=self.decoder.lines,
            consumed_bytes=self.decoder.consumed_bytes,
            partial_tail_bytes=self.decoder.partial_tail_bytes,
            now=now,
            stale_after_s=stale_after_s,
        )

    def to_json(self, now: Now = None, stale_after_s: float | None = None) -> str:
        """The state as canonical (RFC 8785) JSON."""
        return canonical.dumps(self.to_dict(now, stale_after_s))


def read_state(
    data: bytes,
    *,
    now: Now = None,
    stale_after_s: float | None = None,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> dict[str, Any]:
    """The reader state of a whole stream given as bytes."""
    reader = StreamReader(max_line_bytes=max_line_bytes)
    reader.feed(data)
    reader.finish()
    return reader.to_dict(now, stale_after_s)
