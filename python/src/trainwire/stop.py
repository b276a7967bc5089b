"""Cooperative stop: a control file and signals asking a run to stop cleanly.

A controller (the CLI, a web back-end, a scheduler) calls `request_stop(output_dir)`, which
creates `<output_dir>/.trainwire-stop` atomically. A plain `with Run(...)` block listens by
itself (docs/stop.md); a loop or an integration that decides where to stop polls a
`StopControl` at step ends and phase boundaries. The mechanics live beside the writer
(`trainwire.writer.stop_control`), which the run's own stop is built on; this is their
public home. It imports neither torch nor transformers.
"""

from __future__ import annotations

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
    "StopRequest",
    "StopSource",
    "process_start_time",
    "request_stop",
]
