"""What a figure produces: a measurement, judged against its target, as one JSON record."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

__all__ = ["Figure", "Measurement", "Record", "Target", "error_record", "median", "round_ratios"]


def median(values: list[float]) -> float:
    """The median; the figures repeat every measurement because these machines are noisy."""
    return statistics.median(values)


@dataclass(frozen=True)
class Target:
    """What passes: the ratio or the value compared with a bound; `kind=None` only reports."""

    text: str
    kind: Literal["ratio_at_most", "ratio_at_least", "value_at_most", None] = None
    bound: float = 0.0

    def judge(self, value: float | None, ratio: float | None) -> bool | None:
        if self.kind is None:
            return None
        measured = value if self.kind == "value_at_most" else ratio
        if measured is None:
            return False
        return measured >= self.bound if self.kind == "ratio_at_least" else measured <= self.bound


@dataclass(frozen=True)
class Measurement:
    """A figure's numbers before judging.

    `rounds` holds the ratio of each interleaved round (subject against the baseline timed in
    the same round); the figure's ratio is then their median and `spread` their range. Without
    rounds, `ratio` is value/baseline unless the figure says otherwise.
    """

    value: float
    baseline: float | None = None
    ratio: float | None = None
    notes: str = ""
    rounds: list[float] | None = None

    def __post_init__(self) -> None:
        if self.rounds:
            object.__setattr__(self, "ratio", median(self.rounds))
        elif self.ratio is None and self.baseline:
            object.__setattr__(self, "ratio", self.value / self.baseline)

    @property
    def spread(self) -> tuple[float, float] | None:
        return (min(self.rounds), max(self.rounds)) if self.rounds else None


def round_ratios(subject: list[float], baseline: list[float], *, throughput: bool = False) -> list[float]:
    """The ratio of each round, subject over baseline (baseline over subject for times read as throughput)."""
    if len(subject) != len(baseline):
        raise ValueError(f"{len(subject)} subject rounds against {len(baseline)} baseline rounds")
    return [b / s if throughput else s / b for s, b in zip(subject, baseline)]


@dataclass(frozen=True)
class Record:
    """One row of `bench/results.json`."""

    name: str
    value: float | None
    baseline: float | None
    ratio: float | None
    target: str
    passed: bool | None
    unit: str
    notes: str = ""
    #: the lowest and highest per-round ratio, when the figure was timed in interleaved rounds
    spread: tuple[float, float] | None = None

    def to_json(self) -> dict[str, Any]:
        record = asdict(self)
        record["pass"] = record.pop("passed")
        record["spread"] = list(self.spread) if self.spread else None
        return record


@dataclass(frozen=True)
class Figure:
    """One line of the performance contract and the function that measures it."""

    name: str
    unit: str
    target: Target
    measure: Callable[[Any], Measurement] = field(repr=False)

    def record(self, measurement: Measurement) -> Record:
        return Record(
            name=self.name,
            value=measurement.value,
            baseline=measurement.baseline,
            ratio=measurement.ratio,
            target=self.target.text,
            passed=self.target.judge(measurement.value, measurement.ratio),
            unit=self.unit,
            notes=measurement.notes,
            spread=measurement.spread,
        )


def error_record(figure: Figure, error: BaseException) -> Record:
    """The row of a figure that could not be measured (a component missing or broken): a failure."""
    message = f"{type(error).__name__}: {error}".splitlines()[0][:300]
    return Record(figure.name, None, None, None, figure.target.text, False, figure.unit, f"error: {message}")
