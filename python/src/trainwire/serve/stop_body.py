"""The body of a stop request (`POST /api/runs/{key}/stop`): at most `BODY_LIMIT_BYTES`, a JSON
object `{reason, requested_by}` of strings or nulls, each clipped; anything else a 4xx `Problem`."""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request

from trainwire.contract.limits import clip
from trainwire.serve.problems import Problem

__all__ = ["BODY_LIMIT_BYTES", "stop_fields"]

#: a stop body is `{"reason": ..., "requested_by": ...}`: a few hundred bytes
BODY_LIMIT_BYTES = 4096
_BODY_DEPTH_LIMIT = 4


async def stop_fields(request: Request) -> tuple[str | None, str | None]:
    """`reason` and `requested_by` of the request's stop body, read up to the limit."""
    return _fields(await _limited_body(request))


async def _limited_body(request: Request) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > BODY_LIMIT_BYTES):
        raise Problem(413, f"the body is larger than {BODY_LIMIT_BYTES} bytes")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > BODY_LIMIT_BYTES:
            raise Problem(413, f"the body is larger than {BODY_LIMIT_BYTES} bytes")
    return bytes(body)


def _fields(body: bytes) -> tuple[str | None, str | None]:
    try:
        value = json.loads(body.decode("utf-8")) if body else {}
    except (ValueError, RecursionError):
        raise Problem(400, "the body is not JSON") from None
    if _depth(value) > _BODY_DEPTH_LIMIT:
        raise Problem(400, "the body is nested too deeply")
    if not isinstance(value, dict):
        raise Problem(400, "the body is a JSON object {reason, requested_by}")
    fields = (value.get("reason"), value.get("requested_by"))
    if any(field is not None and not isinstance(field, str) for field in fields):
        raise Problem(400, "reason and requested_by are strings")
    return clip(fields[0]), clip(fields[1])


def _depth(value: Any) -> int:
    """How deeply `value` nests, counted without recursion."""
    deepest, pending = 0, [(value, 1)]
    while pending:
        item, depth = pending.pop()
        deepest = max(deepest, depth)
        if isinstance(item, dict):
            pending.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            pending.extend((child, depth + 1) for child in item)
    return deepest
