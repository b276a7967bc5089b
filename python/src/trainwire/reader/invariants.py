"""What `trainwire validate` checks: a stream that follows the writer rules exactly.

A reader tolerates much (reader rules); a writer's output is held to more: every line
valid, and per run `seq` 1, 2, 3 ... with no gap or repeat, `run.started` first, exactly
one `run.finished` as the run's last line, `ts` never going backwards.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trainwire._generated.contract import ValidateRule
from trainwire.contract.clock import parse_timestamp_us
from trainwire.reader.decoder import Decoder

__all__ = ["Violation", "check_stream"]


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken rule: where (line, run), which rule, and what exactly."""

    line: int
    run_id: str | None
    rule: ValidateRule
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"line": self.line, "run_id": self.run_id, "rule": self.rule, "message": self.message}

    def __str__(self) -> str:
        run = f" (run {self.run_id})" if self.run_id is not None else ""
        return f"line {self.line}: {self.rule}{run}: {self.message}"


class _RunCheck:
    """The invariants of one run, checked line by line."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.expected_seq = 1
        self.last_ts_us: int | None = None
        self.last_ts = ""
        self.finished_at: int | None = None
        self.last_line = 0

    def check(self, line: int, event: Any) -> list[Violation]:
        found: list[Violation] = []

        def violation(rule: ValidateRule, message: str) -> None:
            found.append(Violation(line, self.run_id, rule, message))

        if self.finished_at is not None:
            what = "a second run.finished" if event.event == "run.finished" else event.event
            violation("after_finished", f"{what} after the run's run.finished on line {self.finished_at}")
        if self.last_line == 0 and event.event != "run.started":
            violation("started_first", f"the run's first line is {event.event}, not run.started")
        elif self.last_line and event.event == "run.started":
            violation("started_first", "run.started again in the middle of the run")
        if event.seq != self.expected_seq:
            rule: ValidateRule = "seq_gap" if event.seq > self.expected_seq else "seq_not_increasing"
            violation(rule, f"seq {event.seq}, expected {self.expected_seq}")
        ts_us = parse_timestamp_us(event.ts)
        if self.last_ts_us is not None and ts_us < self.last_ts_us:
            violation("ts_backwards", f"ts {event.ts} is before the previous line's {self.last_ts}")
        self.expected_seq = max(self.expected_seq, event.seq + 1)
        if self.last_ts_us is None or ts_us >= self.last_ts_us:
            self.last_ts_us, self.last_ts = ts_us, event.ts
        if event.event == "run.finished" and self.finished_at is None:
            self.finished_at = line
        self.last_line = line
        return found


def check_stream(data: bytes, *, max_line_bytes: int | None = None) -> list[Violation]:
    """Every violation of the contract and of the per-run writer invariants, in line order."""
    decoder = Decoder() if max_line_bytes is None else Decoder(max_line_bytes=max_line_bytes)
    runs: dict[str, _RunCheck] = {}
    violations: list[Violation] = []
    for line, event in decoder.records(data):
        run = runs.get(event.run_id)
        if run is None:
            run = runs[event.run_id] = _RunCheck(event.run_id)
        violations.extend(run.check(line, event))
    decoder.finish()
    violations.extend(Violation(d.line, None, d.code, d.message) for d in decoder.diagnostics)
    if decoder.partial_tail_bytes:
        violations.append(
            Violation(decoder.lines + 1, None, "unterminated_line", f"the stream ends with {decoder.partial_tail_bytes} bytes and no newline")
        )
    for run in runs.values():
        if run.finished_at is None:
            violations.append(Violation(run.last_line, run.run_id, "not_finished", "the run has no run.finished"))
    violations.sort(key=lambda violation: violation.line)
    return violations
