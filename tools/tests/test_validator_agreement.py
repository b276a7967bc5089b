"""Three validators, one verdict: jsonschema, the generated pydantic models, and ajv.

The suite's `validation-cases.json` holds single lines with the verdict every reader must
reach. Where the validators differ by nature (Python's `json.loads` accepts `NaN`; lax
pydantic turns "5" into 5; pydantic strict refuses 5.0 for an integer while JSON Schema
and JavaScript accept it), the project's readers close the gap, and these tests show how.
"""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import pytest
from pydantic import ValidationError

from trainwire.conformance.paths import SUITE_DIR
from trainwire.conformance.schema_check import line_verdict
from trainwire.contract.models import EVENT_ADAPTER, LINE_ADAPTER, UnknownEvent
from trainwire.reader.decoder import Decoder

ROOT = Path(__file__).resolve().parents[2]
CASES = json.loads((SUITE_DIR / "validation-cases.json").read_text(encoding="utf-8"))["cases"]
IDS = [case["id"] for case in CASES]


def test_the_fixture_set_is_large_and_covers_every_verdict() -> None:
    assert len(CASES) >= 40
    assert len(set(IDS)) == len(IDS)
    assert {case["verdict"] for case in CASES} == {"valid", "unknown", "invalid"}


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_jsonschema_verdict(case: dict) -> None:
    assert line_verdict(case["line"]) == case["verdict"], case["why"]


def _reader_verdict(line: str) -> str:
    decoder = Decoder()
    events = decoder.feed(line.encode("utf-8") + b"\n")
    if decoder.diagnostics:
        assert not events
        return "invalid"
    (event,) = events
    return "unknown" if isinstance(event, UnknownEvent) else "valid"


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_python_reader_verdict(case: dict) -> None:
    """The generated models, as the Python reader uses them (strict, NaN refused, 5.0 accepted)."""
    assert _reader_verdict(case["line"]) == case["verdict"], case["why"]


def _case(case_id: str) -> dict:
    return next(case for case in CASES if case["id"] == case_id)


def test_lax_pydantic_would_coerce_a_string_seq_but_the_reader_does_not() -> None:
    line = _case("seq-as-string")["line"]
    assert LINE_ADAPTER.validate_json(line).root.seq == 5  # lax mode coerces "5"
    with pytest.raises(ValidationError):
        EVENT_ADAPTER.validate_json(line, strict=True)
    assert _reader_verdict(line) == "invalid"


def test_pydantic_parses_bare_nan_but_the_reader_refuses_it() -> None:
    line = _case("bare-nan")["line"]
    assert math.isnan(EVENT_ADAPTER.validate_json(line, strict=True).loss)
    assert _reader_verdict(line) == "invalid"


def test_strict_pydantic_refuses_an_integer_valued_float_but_the_reader_accepts_it_as_an_integer() -> None:
    line = _case("integer-valued-float")["line"]
    with pytest.raises(ValidationError):
        EVENT_ADAPTER.validate_json(line, strict=True)
    (event,) = Decoder().feed(line.encode() + b"\n")
    assert event.step == 20 and isinstance(event.step, int)


def test_ajv_verdicts_under_node() -> None:
    """The generated ajv standalone validators, run by Node over every fixture."""
    script = ROOT / "tools" / "tests" / "ajv_verdicts.mjs"
    result = subprocess.run(
        ["node", str(script)],
        input=json.dumps([case["line"] for case in CASES]),
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    verdicts = json.loads(result.stdout)
    mismatches = [
        (case["id"], case["verdict"], got) for case, got in zip(CASES, verdicts, strict=True) if got != case["verdict"]
    ]
    assert mismatches == []
