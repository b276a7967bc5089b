"""The endings of the matrix, produced once per session and shared by every column's module,
and the reference verdict each column is held to: `trainwire runs --json`'s."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from support.cli_process import trainwire
from support.endings import Ending, produce, reap


@pytest.fixture(scope="session")
def endings(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Ending]]:
    found, processes = produce(tmp_path_factory.mktemp("endings"))
    try:
        yield found
    finally:
        reap(processes)


@pytest.fixture(scope="session")
def listed(endings: dict[str, Ending]) -> tuple[list[dict[str, Any]], str]:
    """`trainwire runs --json` and `trainwire runs` of every ending at once."""
    root = next(iter(endings.values())).out.parent
    rows = json.loads(trainwire("runs", "--json", str(root)).stdout)
    return rows, trainwire("runs", str(root)).stdout
