"""A run's step file as tests read it: its first line names the run, the records follow."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def kept_records(path: Path) -> list[dict[str, Any]]:
    """The records of the step file's whole lines, its first line (the run it keeps) left out."""
    data = path.read_bytes()
    lines = [json.loads(line) for line in data[: data.rfind(b"\n") + 1].splitlines()]
    if lines and "after" not in lines[0]:
        assert set(lines[0]) == {"run_id"}, lines[0]
        lines = lines[1:]
    return lines
