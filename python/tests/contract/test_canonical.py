"""trainwire.contract.canonical: RFC 8785 output, checked against fixed values and against node itself."""

from __future__ import annotations

import json
import math
import random
import struct
import subprocess

import pytest

from trainwire.contract.canonical import dumps, format_number

ECMASCRIPT_NUMBERS = [
    (5.0, "5"),
    (-0.0, "0"),
    (0, "0"),
    (1e-7, "1e-7"),
    (1e-6, "0.000001"),
    (0.000001234, "0.000001234"),
    (1e21, "1e+21"),
    (1e20, "100000000000000000000"),
    (1.2345678901234568e20, "123456789012345680000"),
    (123.456, "123.456"),
    (0.1 + 0.2, "0.30000000000000004"),
    (5e-324, "5e-324"),
    (1.7976931348623157e308, "1.7976931348623157e+308"),
    (-2.5e-10, "-2.5e-10"),
    (2**53, "9007199254740992"),
    (2**53 + 1, "9007199254740992"),  # JavaScript holds the nearest double
    (2**60, "1152921504606847000"),
    (-(2**64), "-18446744073709552000"),
    (10**400, "null"),
    (math.inf, "null"),
    (math.nan, "null"),
]


@pytest.mark.parametrize(("value", "expected"), ECMASCRIPT_NUMBERS)
def test_numbers_are_written_as_ecmascript_writes_them(value: float, expected: str) -> None:
    assert format_number(value) == expected


def test_objects_are_sorted_by_utf16_code_units_without_whitespace() -> None:
    # U+1F600 is a surrogate pair (D83D ...) and sorts before U+FFFF in UTF-16, after it by code point.
    value = {"b": [1, 2.0, None, True, False], "a": {"y": 1, "x": 2}, "\uffff": 1, "\U0001f600": 2, "": 0}
    assert dumps(value) == '{"":0,"a":{"x":2,"y":1},"b":[1,2,null,true,false],"\U0001f600":2,"\uffff":1}'


def test_strings_are_escaped_as_json_stringify_does() -> None:
    text = 'quote " backslash \\ \b\f\n\r\t \x00 \x1f \x7f é 😀 \u2028'
    assert dumps(text) == '"quote \\" backslash \\\\ \\b\\f\\n\\r\\t \\u0000 \\u001f \x7f é 😀 \u2028"'


def test_lone_surrogates_are_escaped_and_pairs_joined() -> None:
    assert dumps("a\ud800b") == '"a\\ud800b"'
    assert dumps("\udc00") == '"\\udc00"'
    assert dumps("\ud83d\ude00") == '"\U0001f600"'


def test_values_that_are_not_json_are_refused() -> None:
    with pytest.raises(TypeError):
        dumps({"a": object()})
    with pytest.raises(TypeError):
        dumps({1: "a"})


def _random_doubles(count: int) -> list[float]:
    generator = random.Random(8785)
    values: list[float] = []
    while len(values) < count:
        kind = generator.random()
        if kind < 0.4:  # any bit pattern: every magnitude, subnormals included
            value = struct.unpack("<d", generator.getrandbits(64).to_bytes(8, "little"))[0]
        elif kind < 0.7:  # around the 1e-7 and 1e21 layout boundaries
            value = generator.uniform(1, 10) * 10.0 ** generator.randint(-9, 23)
        else:  # what training writes: losses, learning rates, short decimals
            value = round(generator.uniform(-1000, 1000), generator.randint(0, 8))
        if math.isfinite(value):
            values.append(value)
    return values


def test_numbers_and_strings_match_node_exactly() -> None:
    """A differential test: node prints JSON.stringify of every value; ours must be identical."""
    doubles = _random_doubles(3000)
    big_integers = [2**53 + n for n in range(-3, 4)] + [random.Random(1).getrandbits(70) for _ in range(50)]
    strings = ["plain", "é 😀", "\x00\x01\x1f\x7f", '"\\/', "\u2028\u2029", "a\ud800", "\udfff z"]
    # repr() round-trips doubles exactly; big integers go as strings so that node rounds them itself.
    payload = json.dumps(
        {"doubles": [repr(v) for v in doubles], "integers": [str(v) for v in big_integers], "strings": strings}
    )
    script = (
        "let d='';process.stdin.on('data',c=>d+=c).on('end',()=>{const p=JSON.parse(d);"
        "const out=[...p.doubles.map(Number),...p.integers.map(Number)].map(x=>JSON.stringify(x));"
        "for(const s of p.strings)out.push(JSON.stringify(s));"
        "process.stdout.write(JSON.stringify(out))})"
    )
    result = subprocess.run(
        ["node", "-e", script], input=payload.encode("utf-8", "surrogatepass"), capture_output=True, check=True
    )
    expected = json.loads(result.stdout)
    ours = [dumps(v) for v in doubles] + [dumps(v) for v in big_integers] + [dumps(s) for s in strings]
    mismatches = [
        (value, mine, theirs)
        for value, mine, theirs in zip(doubles + big_integers + strings, ours, expected, strict=False)
        if mine != theirs
    ]
    assert not mismatches, mismatches[:5]
    assert len(ours) == len(expected)
