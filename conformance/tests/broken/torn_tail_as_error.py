"""A broken reader: it reports a torn last line as invalid JSON instead of keeping it as the tail."""

from __future__ import annotations

from typing import Any

from _serve import reference_read, serve


def read(data: bytes, request: dict[str, Any]) -> Any:
    state = reference_read(data, request)
    if state["partial_tail_bytes"]:
        state["diagnostics"].append({"line": state["lines"] + 1, "code": "invalid_json", "message": "torn line"})
    return state


serve("broken-torn-tail", read=read)
