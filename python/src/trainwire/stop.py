"""Cooperative stop: a control file and signals asking a run to stop cleanly.

A controller (the CLI, a web back-end, a scheduler) calls `request_stop(output_dir)`, which
creates `<output_dir>/.trainwire-stop` atomically. A plain `with Run(...)` block listens by
itself (docs/stop.md); a loop or an integration that decides where to stop polls a
`StopControl` at step ends and phase boundaries. The mechanics live beside the writer
(`trainwire.writer.stop_control`), which the run's own stop is built on; this is their
public home. It imports neither torch nor transformers.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainwire.contract.layout import STREAM_FILE
from trainwire.writer.stop_control import (
    MAX_BODY_BYTES,
    STOP_FILE,
    StopControl,
    StopRequest,
    StopSource,
    process_start_time,
    request_stop,
)

__all__ = [
    "MAX_BODY_BYTES",
    "STOP_FILE",
    "StopControl",
    "StopOutcome",
    "StopRequest",
    "StopSource",
    "process_start_time",
    "request_stop",
    "request_stop_and_wait",
]

#: how far back from the end of the stream the latest run is looked for (a hostile or huge
#: stream is never read whole)
_LOOK_BACK_BYTES = 4 << 20
_POLL_S = 0.05


@dataclass(frozen=True)
class StopOutcome:
    """What became of a stop request: acknowledged by a run (`stop.requested` in its stream),
    or still pending, with what the stream says of why (`why`)."""

    path: Path
    acknowledged: bool
    run_id: str | None = None
    step: int | None = None
    why: str | None = None


def request_stop_and_wait(
    output_dir: str | os.PathLike[str],
    *,
    reason: str | None = None,
    requested_by: str | None = None,
    timeout_s: float = 30.0,
) -> StopOutcome:
    """`request_stop`, then waits up to `timeout_s` for a run to acknowledge it: a
    `stop.requested` written into the directory's stream after the request. A request no
    run acknowledged stays pending (a run that starts there honours it)."""
    stream = Path(output_dir) / STREAM_FILE
    offset = _size(stream)
    path = request_stop(output_dir, reason=reason, requested_by=requested_by)
    deadline = time.monotonic() + timeout_s
    while True:
        found = _acknowledgement(stream, offset)
        if found is not None:
            return StopOutcome(path, True, run_id=found[0], step=found[1])
        if time.monotonic() >= deadline:
            return StopOutcome(path, False, why=_why_pending(stream, path))
        time.sleep(_POLL_S)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _lines(stream: Path, start: int) -> list[tuple[int, dict[str, Any]]]:
    """`(position, line)` of each complete line of `stream` from byte `start` that is a JSON
    object (at most the look-back's worth, from the end); a line cut by the start is dropped."""
    try:
        with stream.open("rb") as file:
            position = max(start, _size(stream) - _LOOK_BACK_BYTES)
            file.seek(position)
            raw = file.read(_LOOK_BACK_BYTES)
    except OSError:
        return []
    parsed = []
    pieces = raw.split(b"\n")
    for index, piece in enumerate(pieces[:-1]):  # the last piece is not a complete line yet
        if not (index == 0 and position > 0):  # a line cut by the start is not one
            try:
                value = json.loads(piece)
            except ValueError:
                value = None
            if isinstance(value, dict):
                parsed.append((position, value))
        position += len(piece) + 1
    return parsed


def _acknowledgement(stream: Path, offset: int) -> tuple[str | None, int | None] | None:
    """`(run_id, step)` of the first `stop.requested` written after byte `offset`, with the
    last step its run reported before it (looked for from a little before `offset`)."""
    steps: dict[Any, int] = {}
    for position, line in _lines(stream, max(0, offset - (1 << 20))):
        run_id = line.get("run_id")
        if line.get("event") == "train.step" and isinstance(line.get("step"), int):
            steps[run_id] = line["step"]
        elif line.get("event") == "stop.requested" and position >= offset:
            return (run_id if isinstance(run_id, str) else None), steps.get(run_id)
    return None


def _why_pending(stream: Path, path: Path) -> str:
    """Why no run acknowledged: what the stream's latest run says of itself."""
    if not path.exists():
        return "the control file was taken (removed) by a process that wrote no stop.requested into this directory's stream"
    started = finished = None
    for _, line in _lines(stream, 0):
        if line.get("event") == "run.started":
            started, finished = line, None
        elif (
            line.get("event") == "run.finished" and started is not None and line.get("run_id") == started.get("run_id")
        ):
            finished = line
    if started is None:
        return f"no run has started there yet ({STREAM_FILE} has no run.started)"
    run_id = started.get("run_id")
    if finished is not None:
        return f"the latest run there ({run_id}) already finished ({finished.get('status')}): no live run"
    channels = started.get("stop_channels")
    if not isinstance(channels, list):
        return (
            f"the latest run ({run_id}) did not declare what it listens to (no stop_channels in run.started): it may"
            " not watch the control file (a Run outside a `with` block, another writer), or it has not reached a"
            " step end within the wait"
        )
    if "control_file" not in channels:
        return f"the latest run ({run_id}) does not listen to the control file (stop_channels: {', '.join(map(str, channels)) or 'none'})"
    return (
        f"the latest run ({run_id}) listens to the control file but has not reached a step end or phase boundary"
        " within the wait (a long step?), or its process is gone"
    )
