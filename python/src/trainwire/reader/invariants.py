"""What `trainwire validate` checks: a stream that follows the writer rules exactly.

A reader tolerates much (reader rules); a writer's output is held to more: every line
valid, and per run `seq` 1, 2, 3 ... with no gap or repeat, `run.started` first, exactly
one `run.finished` as the run's last line, `ts` never going backwards. Those are errors.
Slips a reader survives but a writer should not make are warnings: a step going back
within a trial and attempt without `train.restarted` or `train.rolled_back`, a rollback
forward, a second `trial.ended` for one attempt, a field of its own not named `x_...`, an
event name one typo away from a known one, a `ts` without exactly six fraction digits
(writer rule 2).

The stream is read in chunks: memory is bounded by the longest line, not the file.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from trainwire._generated.contract import STEP_ROLES, WARNING_RULES, ValidateRule
from trainwire.contract.clock import parse_timestamp_us
from trainwire.contract.models import EVENT_NAMES, UnknownEvent
from trainwire.lines.decoder import Decoder

__all__ = ["Violation", "check_chunks", "check_file", "check_stream"]

Severity = Literal["error", "warning"]

#: reading granularity: what the decoder holds beyond the longest line
CHUNK_BYTES = 1 << 16
_NEAR_MISS_CUTOFF = 0.8


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken rule: where (line, run, field), which rule, how bad, and what exactly."""

    line: int
    run_id: str | None
    rule: ValidateRule
    message: str
    field: str | None = None

    @property
    def severity(self) -> Severity:
        # A reader diagnostic code (schema_violation, invalid_json, ...) is an error.
        return "warning" if self.rule in WARNING_RULES else "error"

    def to_dict(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "run_id": self.run_id,
            "rule": self.rule,
            "severity": self.severity,
            "field": self.field,
            "message": self.message,
        }

    def __str__(self) -> str:
        run = f" (run {self.run_id})" if self.run_id is not None else ""
        field = f" [{self.field}]" if self.field is not None else ""
        warning = "warning " if self.severity == "warning" else ""
        return f"line {self.line}: {warning}{self.rule}{run}{field}: {self.message}"


class _RunCheck:
    """The invariants of one run, checked line by line."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.expected_seq = 1
        self.last_ts_us: int | None = None
        self.last_ts = ""
        self.finished_at: int | None = None
        self.last_line = 0
        #: the last step of each trial's current attempt (None: outside trials)
        self.steps: dict[int | None, int] = {}
        #: (trial, attempt) of each `trial.ended` seen
        self.trials_ended: set[tuple[int, int]] = set()

    def check(self, line: int, event: Any) -> list[Violation]:
        found: list[Violation] = []

        def violation(rule: ValidateRule, message: str, field: str | None = None) -> None:
            found.append(Violation(line, self.run_id, rule, message, field))

        if self.finished_at is not None:
            what = "a second run.finished" if event.event == "run.finished" else event.event
            violation("after_finished", f"{what} after the run's run.finished on line {self.finished_at}")
        if self.last_line == 0 and event.event != "run.started":
            violation("started_first", f"the run's first line is {event.event}, not run.started", "event")
        elif self.last_line and event.event == "run.started":
            violation("started_first", "run.started again in the middle of the run", "event")
        if event.seq != self.expected_seq:
            rule: ValidateRule = "seq_gap" if event.seq > self.expected_seq else "seq_not_increasing"
            violation(rule, f"seq {event.seq}, expected {self.expected_seq}", "seq")
        ts_us = parse_timestamp_us(event.ts)
        if self.last_ts_us is not None and ts_us < self.last_ts_us:
            violation("ts_backwards", f"ts {event.ts} is before the previous line's {self.last_ts}", "ts")
        self._check_step(event, violation)
        self.expected_seq = max(self.expected_seq, event.seq + 1)
        if self.last_ts_us is None or ts_us >= self.last_ts_us:
            self.last_ts_us, self.last_ts = ts_us, event.ts
        if event.event == "run.finished" and self.finished_at is None:
            self.finished_at = line
        self.last_line = line
        return found

    def _check_step(self, event: Any, violation: Any) -> None:
        if event.event == "trial.ended":
            ended = (event.trial, event.attempt)
            if ended in self.trials_ended:
                violation(
                    "trial_ended_twice",
                    f"a second trial.ended for trial {event.trial} attempt {event.attempt}",
                    "trial",
                )
            self.trials_ended.add(ended)
        role = STEP_ROLES.get(event.event)
        if role is None:
            return
        trial = getattr(event, "trial", None)
        if role == "starts_trial":
            self.steps.pop(trial, None)
            return
        if role == "rolls_back" and event.step > event.previous_step:
            violation(
                "rollback_forward",
                f"train.rolled_back to step {event.step}, after its previous_step {event.previous_step}",
                "step",
            )
        last = self.steps.get(trial)
        if role == "moves" and last is not None and event.step < last:
            where = "" if trial is None else f" in trial {trial}"
            violation(
                "step_backwards",
                f"{event.event} at step {event.step} after step {last}{where} "
                "with no train.restarted or train.rolled_back between",
                "step",
            )
        self.steps[trial] = event.step


def _line_warnings(line: int, event: Any) -> Iterator[Violation]:
    """What one line alone gets wrong that a reader lets pass."""
    fraction = event.ts[20:-1] if event.ts[19:20] == "." else ""
    if len(fraction) != 6:
        yield Violation(
            line,
            event.run_id,
            "ts_fraction_digits",
            f"ts {event.ts} has {len(fraction)} fraction digits, writers write 6",
            "ts",
        )
    if isinstance(event, UnknownEvent):
        near = difflib.get_close_matches(event.event.lower(), EVENT_NAMES, n=1, cutoff=_NEAR_MISS_CUTOFF)
        if near:
            yield Violation(
                line,
                event.run_id,
                "event_name_near_miss",
                f"unknown event {event.event!r}: did you mean {near[0]!r}?",
                "event",
            )
        return
    for field in _undeclared_fields(event, ""):
        yield Violation(
            line,
            event.run_id,
            "unknown_field",
            f"{event.event} has no field {field!r}; a producer's own fields start with x_",
            field,
        )


def _undeclared_fields(model: BaseModel, prefix: str) -> Iterator[str]:
    """Fields the schema does not declare (and not `x_...`), here and in nested objects."""
    for name in model.model_extra or ():
        if not name.startswith("x_"):
            yield prefix + name
    for name in type(model).model_fields:
        value = getattr(model, name)
        if isinstance(value, BaseModel):
            yield from _undeclared_fields(value, f"{prefix}{name}.")


def check_chunks(chunks: Iterable[bytes], *, max_line_bytes: int | None = None) -> list[Violation]:
    """Every violation of the contract and of the writer rules, in line order."""
    decoder = Decoder() if max_line_bytes is None else Decoder(max_line_bytes=max_line_bytes)
    runs: dict[str, _RunCheck] = {}
    violations: list[Violation] = []
    for chunk in chunks:
        for line, event in decoder.records(chunk):
            run = runs.get(event.run_id)
            if run is None:
                run = runs[event.run_id] = _RunCheck(event.run_id)
            violations.extend(run.check(line, event))
            violations.extend(_line_warnings(line, event))
    decoder.finish()
    violations.extend(Violation(d.line, None, d.code, d.message) for d in decoder.diagnostics)
    if decoder.partial_tail_bytes:
        violations.append(
            Violation(
                decoder.lines + 1,
                None,
                "unterminated_line",
                f"the stream ends with {decoder.partial_tail_bytes} bytes and no newline",
            )
        )
    for run in runs.values():
        if run.finished_at is None:
            violations.append(Violation(run.last_line, run.run_id, "not_finished", "the run has no run.finished"))
    violations.sort(key=lambda violation: violation.line)
    return violations


def check_stream(data: bytes, *, max_line_bytes: int | None = None) -> list[Violation]:
    """`check_chunks` for a stream already in memory."""
    return check_chunks([data], max_line_bytes=max_line_bytes)


def check_file(path: Path, *, max_line_bytes: int | None = None) -> list[Violation]:
    """`check_chunks` for a file, read a chunk at a time."""
    with path.open("rb") as file:
        return check_chunks(iter(lambda: file.read(CHUNK_BYTES), b""), max_line_bytes=max_line_bytes)
