"""Child process: fold a stream into run state and report peak memory above the post-import RSS.

Usage: fold_child.py STREAM CHUNK_BYTES  ->  one JSON object on stdout.
Memory is read from /proc/self/status (VmRSS now, VmHWM the peak); elsewhere from ru_maxrss.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path

from trainwire.reader.state import StreamReader


def _status_bytes(field: str) -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _peak_bytes() -> int:
    peak = _status_bytes("VmHWM")
    if peak is not None:
        return peak
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return maxrss if sys.platform == "darwin" else maxrss * 1024


def main(path: Path, chunk_bytes: int) -> None:
    start = _status_bytes("VmRSS") or _peak_bytes()
    reader = StreamReader()
    started = time.perf_counter()
    with open(path, "rb") as stream:
        while chunk := stream.read(chunk_bytes):
            reader.feed(chunk)
    state = reader.to_dict()
    seconds = time.perf_counter() - started
    report = {
        "bytes": state["consumed_bytes"],
        "runs": len(state["runs"]),
        "seconds": seconds,
        "start_bytes": start,
        "peak_bytes": _peak_bytes(),
    }
    json.dump(report, sys.stdout)


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]))
