"""Loading the golden cases: `<suite>/cases/<id>/{case.json, stream.ndjson, ...}`."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

Role = Literal["reader", "writer"]
ROLES: tuple[Role, ...] = ("reader", "writer")

CASE_FILE = "case.json"
STREAM_FILE = "stream.ndjson"
STATE_FILE = "expected-state.json"
SCENARIO_FILE = "scenario.json"


@dataclass(frozen=True)
class Case:
    """One golden case, as described by its `case.json`."""

    id: str
    directory: Path
    meta: dict[str, Any] = field(repr=False)

    @property
    def title(self) -> str:
        return str(self.meta.get("title", ""))

    @property
    def roles(self) -> tuple[Role, ...]:
        return tuple(self.meta.get("roles", ()))

    @property
    def contract(self) -> str:
        """The contract version a reader needs to pass the case: `1.0` or `1.1`."""
        return str(self.meta.get("contract", "1.0"))

    @property
    def invalid_lines(self) -> bool:
        return bool(self.meta.get("invalid_lines", False))

    @property
    def now(self) -> str | None:
        return self.meta.get("now")

    @property
    def stale_after_s(self) -> float | None:
        return self.meta.get("stale_after_s")

    @property
    def max_line_bytes(self) -> int | None:
        return self.meta.get("max_line_bytes")

    @property
    def derive(self) -> dict[str, Any] | None:
        return self.meta.get("derive")

    def path(self, name: str) -> Path:
        return self.directory / name

    def stream(self) -> bytes:
        return self.path(STREAM_FILE).read_bytes()

    def expected_state(self) -> dict[str, Any]:
        return _read_json(self.path(STATE_FILE))

    def scenario(self) -> dict[str, Any] | None:
        path = self.path(SCENARIO_FILE)
        return _read_json(path) if path.is_file() else None


def _read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def load_case(directory: Path) -> Case:
    meta = _read_json(directory / CASE_FILE)
    return Case(id=str(meta.get("id", directory.name)), directory=directory, meta=meta)


def load_cases(directory: Path, ids: list[str] | None = None) -> list[Case]:
    """Every case under `directory` in id order, or only `ids` (an unknown id is an error)."""
    found = {path.name: path for path in sorted(directory.iterdir()) if (path / CASE_FILE).is_file()}
    if ids:
        unknown = [case_id for case_id in ids if case_id not in found]
        if unknown:
            raise KeyError(f"no such case: {', '.join(unknown)}")
        return [load_case(found[case_id]) for case_id in ids]
    return [load_case(path) for path in found.values()]
