"""A writer harness on the reference writer, with an optional flaw: `sloppy_writer.py good|millis|unredacted`."""

from __future__ import annotations

import re
import sys
from typing import Any

from _serve import serve

from trainwire.conformance.scenario import play

MODE = sys.argv[1]
_MICROS = re.compile(rb'("ts":"[^"]*\.\d{3})\d{3}Z"')


def write(scenario: dict[str, Any]) -> bytes:
    stream = play(scenario, run_id_prefix="sloppy")
    if MODE == "millis":  # timestamps with three fraction digits instead of six
        return _MICROS.sub(rb'\1Z"', stream)
    if MODE == "unredacted":  # a secret leaks into the config
        return stream.replace(b'"hub_token":"<redacted>"', b'"hub_token":"hf_abc"', 1)
    return stream


serve(f"sloppy-writer-{MODE}", write=write)
