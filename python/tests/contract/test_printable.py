"""What is escaped before a stream's text is shown, on a terminal and on the page alike."""

from __future__ import annotations

import json

import pytest
from support.typescript_side import typescript_lines

from trainwire.contract.printable import ESCAPED_RANGES, printable

CASES = [
    ("loss é 損失 ▁█ 🙂", "loss é 損失 ▁█ 🙂"),
    ("a\x1b[2Jb\x07\x9b\u202e\n", "a\\x1b[2Jb\\x07\\x9b\\u202e\\x0a"),
    ("run\u2066evil\u2069.txt", "run\\u2066evil\\u2069.txt"),
    ("zero\u200bwidth\ufeff", "zero\\u200bwidth\\ufeff"),
    ("line\u2028break\x7f", "line\\u2028break\\x7f"),
    ("", ""),
]
#: every code point but the surrogates, in strings of a few thousand
_ALL = [chr(code) for code in range(0x110000) if not 0xD800 <= code <= 0xDFFF]
SWEEP = ["".join(_ALL[start : start + 4096]) for start in range(0, len(_ALL), 4096)]


@pytest.mark.parametrize(("text", "shown"), CASES)
def test_printable_escapes_what_reorders_or_drives_the_display(text: str, shown: str) -> None:
    assert printable(text) == shown


def test_exactly_the_table_is_escaped() -> None:
    escaped = {code for code in range(0x110000) if not 0xD800 <= code <= 0xDFFF and printable(chr(code)) != chr(code)}
    assert escaped == {code for low, high in ESCAPED_RANGES for code in range(low, high + 1)}


def test_typescript_escapes_every_code_point_as_python_does() -> None:
    texts = [text for text, _ in CASES] + SWEEP
    assert [json.loads(line) for line in typescript_lines("printable.js", texts)] == [printable(t) for t in texts]
