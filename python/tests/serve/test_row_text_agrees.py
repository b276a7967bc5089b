"""The server filters the runs list on the text the page's cells show: `serve.row_text` and
the page's `RUN_COLUMNS` and `configColumn` (`typescript/dashboard/list-view.ts`) write the
same text for the same row, cell for cell."""

from __future__ import annotations

import json
import random

from support.typescript_side import typescript_lines

from trainwire.serve.row_text import cell_texts, config_cell

CONFIG = ["lr", "model.name", "flag", "none", "missing", "big", "tiny"]


def _rows() -> list[dict[str, object]]:
    shuffled = random.Random(44)
    numbers = [0.05, 1234.5, 123456.7, 1e-7, 2.0, 5, 0.123456, -0.00012345, 9.9995, 1.0625, 3e-4, 12.5, 1e21]
    rows: list[dict[str, object]] = [
        {
            "key": "exp\u202egnp.exe/run",
            "run_id": "r\u200b1",
            "name": "beta\u202e sweep",
            "tags": ["baseline", "fp16\u2066"],
            "status": "awaiting_approval",
            "step": 5,
            "total_steps": 20,
            "duration_s": 3725.0,
            "last_loss": 0.123456,
            "best_loss": 2.0,
            "git_sha": "0123456789abcdef",
            "started_at": "2026-12-04T12:00:00.75+02:00",
            "config": {
                "lr": 3e-4,
                "model.name": "wide\u202enet",
                "flag": True,
                "none": None,
                "big": 1e21,
                "tiny": 1e-7,
            },
            "notes": "resumed after preemption\u0007",
        },
        {"key": "blank", "run_id": "", "tags": [], "config": {}},
    ]
    for number in range(40):
        rows.append(
            {
                "key": f"run-{number}",
                "run_id": f"id-{number}",
                "status": shuffled.choice(["running", "succeeded", "stale", "failed"]),
                "step": shuffled.choice([None, number, 10**6]),
                "total_steps": shuffled.choice([None, 0, 100]),
                "duration_s": shuffled.choice([None, shuffled.uniform(0, 100_000)]),
                "last_loss": shuffled.choice([None, *numbers, shuffled.uniform(-10, 10)]),
                "best_loss": shuffled.choice([None, *numbers, shuffled.expovariate(0.001)]),
                "started_at": f"2026-12-0{number % 9 + 1}T0{number % 10}:00:0{number % 10}.{number:06d}Z",
                "config": {"lr": shuffled.choice(numbers), "flag": shuffled.choice([True, False])},
            }
        )
    return rows


def test_the_server_and_the_page_write_the_same_cells() -> None:
    rows = _rows()
    typescript = [
        json.loads(line) for line in typescript_lines("row-cells.js", [{"row": row, "config": CONFIG} for row in rows])
    ]
    python = [
        cell_texts({"tags": [], "config": {}, **row}) + [config_cell(row, name) for name in CONFIG] for row in rows
    ]
    assert python == typescript
