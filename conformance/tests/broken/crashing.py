"""A harness that breaks on streams holding a byte order mark: `crashing.py exit|garbage|hang`."""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

from _serve import reference_read, serve

BOM = b"\xef\xbb\xbf"
MODE = sys.argv[1]


def read(data: bytes, request: dict[str, Any]) -> Any:
    if data.startswith(BOM):
        sys.stderr.write("crashing: a byte order mark, giving up\n")
        sys.stderr.flush()
        if MODE == "exit":
            os._exit(3)
        if MODE == "garbage":
            sys.stdout.write("Segmentation fault (not really)\n")
            sys.stdout.flush()
        threading.Event().wait()  # "hang" (and after the garbage): never answer
    return reference_read(data, request)


serve(f"crashing-{MODE}", read=read)
