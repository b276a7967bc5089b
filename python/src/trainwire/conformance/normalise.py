"""Apply the suite's `normalisation.json` to a stream before comparing it with the golden.

Each rule kind is one small function; the file decides which fields they apply to.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainwire.conformance.diff import Difference


@dataclass
class Normalised:
    """The parsed lines of a stream after normalisation, and what the checks found."""

    lines: list[Any]
    problems: list[Difference] = field(default_factory=list)


@dataclass(frozen=True)
class Rules:
    rules: list[dict[str, Any]]

    @classmethod
    def load(cls, path: Path) -> Rules:
        return cls(json.loads(path.read_text(encoding="utf-8"))["rules"])

    @property
    def tolerance(self) -> float:
        return next((float(rule["relative_tolerance"]) for rule in self.rules if rule["rule"] == "numbers"), 0.0)

    def apply(self, lines: list[Any]) -> Normalised:
        result = Normalised(lines=copy.deepcopy(lines))
        for rule in self.rules:
            _RULES[rule["rule"]](rule, result)
        return result


def _split(dotted: str) -> list[str]:
    return dotted.split(".")


def _get(obj: Any, dotted: str) -> tuple[bool, Any]:
    for key in _split(dotted):
        if not isinstance(obj, dict) or key not in obj:
            return False, None
        obj = obj[key]
    return True, obj


def _set(obj: Any, dotted: str, value: Any) -> None:
    *parents, last = _split(dotted)
    for key in parents:
        obj = obj[key]
    obj[last] = value


def _delete(obj: Any, dotted: str) -> None:
    *parents, last = _split(dotted)
    for key in parents:
        if not isinstance(obj, dict) or key not in obj:
            return
        obj = obj[key]
    if isinstance(obj, dict):
        obj.pop(last, None)


def _timestamp(rule: dict[str, Any], result: Normalised) -> None:
    name, pattern = rule["field"], re.compile(rule["pattern"])
    last_by_run: dict[Any, str] = {}
    for number, line in enumerate(result.lines, 1):
        present, value = _get(line, name)
        if not present:
            continue
        if not isinstance(value, str) or not pattern.fullmatch(value):
            result.problems.append(Difference(f"$.{name}", rule["pattern"], value, number, "timestamp format"))
        elif rule.get("order") == "non_decreasing_per_run":
            run = line.get("run_id") if isinstance(line, dict) else None
            # Same fixed format: text order is time order.
            if run in last_by_run and value < last_by_run[run]:
                result.problems.append(
                    Difference(f"$.{name}", f">= {last_by_run[run]}", value, number, "time went back within the run")
                )
            last_by_run[run] = value
        _set(line, name, rule["replace_with"])


def _rename(rule: dict[str, Any], result: Normalised) -> None:
    names: dict[str, str] = {}
    for line in result.lines:
        for dotted in rule["fields"]:
            present, value = _get(line, dotted)
            if present and isinstance(value, str):
                if value not in names:
                    names[value] = rule["template"].format(n=len(names) + 1)
                _set(line, dotted, names[value])


def _ignore(rule: dict[str, Any], result: Normalised) -> None:
    for line in result.lines:
        _delete(line, rule["field"])


def _numbers(rule: dict[str, Any], result: Normalised) -> None:
    """Read by the comparison (`Rules.tolerance`); nothing to rewrite."""


_RULES: dict[str, Callable[[dict[str, Any], Normalised], None]] = {
    "timestamp": _timestamp,
    "rename": _rename,
    "ignore": _ignore,
    "numbers": _numbers,
}
