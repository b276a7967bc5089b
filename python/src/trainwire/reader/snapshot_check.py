"""Whether a journal snapshot (`series.json`) read from a file anyone may have written can be
gone on from: under its cap, and every part the shape its readers take.

`store` is checked down to each point, as the dashboard's `checkOpening` checks the opening
(`typescript/dashboard/opening.ts`), the same rules in both; `state` against the reader
state's run schema (`schemas/reader-state`, strictly); `events` line by line by the decoder,
as a stream's lines are. A snapshot failing any of it is not opened from: the stream is read.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trainwire.contract.canonical import dumps
from trainwire.contract.journal_reads import read_journal_json
from trainwire.lines.decoder import Decoder, DiagnosticLog
from trainwire.lines.run_journal import SNAPSHOT_VERSION
from trainwire.lines.view_events import MAX_VIEW_EVENTS, VIEW_EVENTS

__all__ = ["MAX_SNAPSHOT_BYTES", "read_snapshot_file", "trusted_snapshot"]

#: A full series is at most 1000 buckets of 4 points, some 170 KB of canonical JSON, and a run's
#: 256 trial curves (`MAX_TRIAL_CURVES`, a sixteenth of a series each) 1.7 MB together: 32 MiB
#: holds some 150 full series beside them, 1000 markers and 1000 view events. The store bounds
#: each series, not how many a run names, so the cap leaves that room.
MAX_SNAPSHOT_BYTES = 32 << 20
_MARKER_KINDS = frozenset(("restart", "rollback", "eval", "checkpoint", "stop", "finished"))


def read_snapshot_file(path: Path, *, within: Path | None = None) -> Any:
    """The parsed snapshot at `path` (`read_journal_json` under `MAX_SNAPSHOT_BYTES`):
    `OSError` when absent or over the cap, `ValueError` when not JSON."""
    return read_journal_json(path, MAX_SNAPSHOT_BYTES, within=within)


def trusted_snapshot(snapshot: Any, run_id: str) -> bool:
    """Whether `snapshot` is a version-2 snapshot of `run_id` whose parts are each of the
    shape their readers take (`SeriesStore.from_dict`, `RunStateFold`'s resume, `ViewEvents`)."""
    if not isinstance(snapshot, dict) or snapshot.get("snapshot_version") != SNAPSHOT_VERSION:
        return False
    store: Any = snapshot.get("store")
    state, events = snapshot.get("state"), snapshot.get("events")
    return (
        snapshot.get("run_id") == run_id
        and _is_count(snapshot.get("stream_offset"))
        and _is_store(store)
        and any(run["run_id"] == run_id for run in store["runs"])
        and isinstance(state, dict)
        and state.get("run_id") == run_id
        and _is_run_state(state)
        and _are_view_events(events, run_id)
    )


def _is_run_state(state: dict[str, Any]) -> bool:
    try:
        _run_state_model().model_validate_json(dumps(state), strict=True)
    except ValueError:  # pydantic's ValidationError is a ValueError
        return False
    return True


@functools.cache
def _run_state_model() -> Any:
    from trainwire._generated.reader_state import RunStateRecord

    return RunStateRecord


def _are_view_events(events: Any, run_id: str) -> bool:
    """A list of at most `MAX_VIEW_EVENTS` of the run's view events, each a line the decoder accepts."""
    if not isinstance(events, list) or len(events) > MAX_VIEW_EVENTS:
        return False
    if not all(isinstance(event, dict) and event.get("run_id") == run_id for event in events):
        return False
    if not all(event.get("event") in VIEW_EVENTS for event in events):
        return False
    lines = "".join(dumps(event) + "\n" for event in events).encode("utf-8")
    return len(Decoder(diagnostics=DiagnosticLog()).feed(lines).dicts) == len(events)


def _is_store(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and _is_count(value.get("max_points"))
        and _is_count(value.get("max_markers"))
        and _every(value.get("runs"), _is_run)
    )


def _is_run(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("run_id"), str)
        and _is_count(value.get("attempt"))
        and _is_step(value.get("last_step"))
        and _every(value.get("restarts"), lambda restart: _is_tuple(restart, 2) and all(map(_is_number, restart)))
        and isinstance(value.get("series"), dict)
        and all(map(_is_series, value["series"].values()))
        and _every(value.get("markers"), _is_marker)
        and _is_count(value.get("dropped_markers"))
    )


def _is_series(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and _is_count(value.get("bucket_size"))
        and value["bucket_size"] >= 1
        and _is_count(value.get("count"))
        and _every(value.get("buckets"), _is_bucket)
    )


def _is_bucket(value: Any) -> bool:
    """[attempt, count, first, min, max, last], each point [index, step, value, time]."""
    return (
        _is_tuple(value, 6)
        and _is_count(value[0])
        and _is_count(value[1])
        and all(_is_tuple(point, 4) and all(map(_is_number, point)) for point in value[2:])
    )


def _is_marker(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and value.get("kind") in _MARKER_KINDS
        and _is_step(value.get("step"))
        and _is_count(value.get("attempt"))
        and (value.get("label") is None or isinstance(value["label"], str))
        and _is_number(value.get("time_us"))
    )


def _every(value: Any, check: Callable[[Any], bool]) -> bool:
    return isinstance(value, list) and all(map(check, value))


def _is_tuple(value: Any, length: int) -> bool:
    return isinstance(value, list) and len(value) == length


def _is_number(value: Any) -> bool:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer past the floats: JavaScript reads it as an infinity
        return False


#: the largest integer a JavaScript number holds exactly (`Number.isSafeInteger`)
_SAFE_INTEGER = 2**53 - 1


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _SAFE_INTEGER


def _is_step(value: Any) -> bool:
    return value is None or _is_number(value)
