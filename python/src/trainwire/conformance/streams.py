"""Checks on a stream a writer produced: framing, the bundle, the stream invariants."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from trainwire.conformance.diff import Difference

BOM = b"\xef\xbb\xbf"


def split_lines(data: bytes) -> tuple[list[bytes], bytes]:
    """The `\\n`-terminated lines (without it) and whatever follows the last one."""
    *lines, tail = data.split(b"\n")
    return lines, tail


def reader_framing(data: bytes) -> bytes:
    """The stream as a reader frames it: no leading BOM, no `\r` before `\n`, no blank line.

    Only for checking lines a *reader* must accept; a writer's stream is checked as is.
    """
    lines, tail = split_lines(data.removeprefix(BOM))
    kept = [line.removesuffix(b"\r") for line in lines]
    return b"".join(line + b"\n" for line in kept if line.strip(b" \t")) + tail


def parse_lines(data: bytes) -> tuple[list[Any], list[Difference]]:
    """Each line as JSON, and every line that a writer must not have written."""
    from trainwire.conformance.schema_check import line_verdict, validator_for
    from trainwire.reader.decoder import parse_strict

    lines, tail = split_lines(data)
    parsed: list[Any] = []
    problems: list[Difference] = []
    if tail:
        problems.append(
            Difference(
                "$", "a line ending with \\n", tail[:80].decode("utf-8", "replace"), len(lines) + 1, "torn last line"
            )
        )
    for number, raw in enumerate(lines, 1):
        try:
            text = raw.decode("utf-8")
            value = parse_strict(text)
        except ValueError as error:
            problems.append(
                Difference("$", "one JSON object in UTF-8", raw[:80].decode("utf-8", "replace"), number, str(error))
            )
            parsed.append(None)
            continue
        parsed.append(value)
        if line_verdict(text) == "invalid":
            problems.append(_schema_problem(value, number, validator_for()))
    return parsed, problems


def _schema_problem(value: Any, number: int, validator: Any) -> Difference:
    from jsonschema.exceptions import best_match

    from trainwire.conformance.schema_check import validator_for

    # Against the line's own event when it names one: far better messages than the union's.
    definition = _definitions().get(value.get("event")) if isinstance(value, dict) else None
    own = validator_for(definition=definition) if definition else validator
    error = best_match(own.iter_errors(value))
    if error is None:
        return Difference("$", "a line valid against the bundle", _excerpt(value), number)
    path = "$" + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in error.absolute_path)
    return Difference(path, "a value valid against the bundle", error.instance, number, error.message)


@lru_cache(maxsize=1)
def _definitions() -> dict[str, str]:
    """Event name -> the bundle definition that describes it."""
    from trainwire.conformance.schema_check import load_bundle

    return {
        schema["properties"]["event"]["const"]: name
        for name, schema in load_bundle()["$defs"].items()
        if "const" in schema.get("properties", {}).get("event", {})
    }


def _excerpt(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."


def invariant_problems(data: bytes) -> list[str]:
    """The stream invariants `trainwire validate` checks, as readable lines."""
    from trainwire.reader.invariants import check_stream

    return [_describe_violation(violation) for violation in check_stream(data)]


def _describe_violation(violation: Any) -> str:
    line = getattr(violation, "line", None)
    return f"line {line}: {violation}" if line is not None and f"line {line}" not in str(violation) else str(violation)
