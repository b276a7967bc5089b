"""A broken reader: it coerces `"seq":"5"` into 5 (without changing byte counts) before reading."""

from __future__ import annotations

import re
from typing import Any

from _serve import reference_read, serve

# Two spaces replace the two quotes so that only the coercion differs, not the offsets.
_QUOTED_SEQ = re.compile(rb'"seq":"(\d+)"')


def read(data: bytes, request: dict[str, Any]) -> Any:
    return reference_read(_QUOTED_SEQ.sub(rb'"seq":\1  ', data), request)


serve("broken-coerce", read=read)
