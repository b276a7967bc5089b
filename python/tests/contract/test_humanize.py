"""Durations and rates for people: one formatter per language, and both write the same strings."""

from __future__ import annotations

import json
import random

import pytest
from support.typescript_side import typescript_lines

from trainwire.contract.humanize import format_duration, format_quantity, format_rate

FORMATTERS = {"duration": format_duration, "quantity": format_quantity, "rate": format_rate}
#: kind, value -> the text, chosen at the edges of each form
CASES = [
    ("duration", 0, "0.0s"),
    ("duration", 0.05, "0.1s"),  # a half rounds up
    ("duration", 4.24, "4.2s"),
    ("duration", 59.94, "59.9s"),
    ("duration", 59.96, "1:00"),  # rounds to a minute: written as one
    ("duration", 187, "3:07"),
    ("duration", 3599.5, "1:00:00"),
    ("duration", 3723, "1:02:03"),
    ("duration", 90000, "25:00:00"),
    ("duration", -3, "0.0s"),
    ("quantity", 0, "0"),
    ("quantity", 2, "2"),
    ("quantity", 12.345, "12.3"),
    ("quantity", 999.4, "999"),
    ("quantity", 999.5, "1k"),
    ("quantity", 1234, "1.23k"),
    ("quantity", 69500, "69.5k"),
    ("quantity", 123456, "123k"),
    ("quantity", 999500, "1M"),
    ("quantity", 1.5e9, "1.5G"),
    ("quantity", 3e15, "3000T"),
    ("quantity", 0.01234, "0.0123"),
    ("quantity", -1234, "-1.23k"),
    ("rate", 69500, "69.5k steps/s"),  # never 6.95e+04
    ("rate", 2, "2 steps/s"),
    ("rate", 1, "1 steps/s"),
    ("rate", 0.4, "2.5s/step"),
    ("rate", 1 / 150, "2:30/step"),
]


@pytest.mark.parametrize(("kind", "value", "text"), CASES)
def test_each_form_reads_as_intended(kind: str, value: float, text: str) -> None:
    assert FORMATTERS[kind](value) == text


def test_both_languages_write_the_same_text() -> None:
    chance = random.Random(20261201)
    sweep = [10 ** chance.uniform(-4, 13) for _ in range(400)] + [chance.randint(0, 100_000) / 10 for _ in range(200)]
    requests = [{"kind": kind, "value": value} for kind, value, _ in CASES]
    requests += [{"kind": kind, "value": value} for value in sweep for kind in FORMATTERS]
    typescript = typescript_lines("humanize.js", requests)
    python = [FORMATTERS[request["kind"]](request["value"]) for request in requests]
    assert [json.loads(text) for text in typescript] == python
