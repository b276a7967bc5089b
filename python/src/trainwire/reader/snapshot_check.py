"""Whether a journal snapshot (`series.json`) read from a file anyone may have written can be
gone on from: under its cap, and every part the shape its readers take.

`store` is checked down to each point by the rules the dashboard's `checkOpening` applies to
the opening (`typescript/dashboard/opening.ts`), as a pydantic-core schema run over the bytes
before they are parsed; `state` against the reader state's run schema (`schemas/reader-state`,
strictly); `events` line by line by the decoder, as a stream's lines are. A snapshot failing
any of it is not opened from: the stream is read.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from pydantic_core import SchemaValidator, from_json
from pydantic_core import core_schema as schema

from trainwire.contract.canonical import dumps
from trainwire.contract.files import read_capped
from trainwire.lines.decoder import Decoder, DiagnosticLog
from trainwire.lines.run_journal import SNAPSHOT_VERSION
from trainwire.lines.view_events import MAX_VIEW_EVENTS, VIEW_EVENTS

__all__ = ["MAX_SNAPSHOT_BYTES", "read_trusted_snapshot"]

#: A full series is at most 1000 buckets of 4 points, some 170 KB of canonical JSON, and a run's
#: 256 trial curves (`MAX_TRIAL_CURVES`, a sixteenth of a series each) 1.7 MB together: 32 MiB
#: holds some 150 full series beside them, 1000 markers and 1000 view events. The store bounds
#: each series, not how many a run names, so the cap leaves that room.
MAX_SNAPSHOT_BYTES = 32 << 20

# `checkOpening`'s rules: a count is a safe integer >= 0, a number finite (an integer past the
# floats is an infinity, as JavaScript reads it), a step a number or null
_COUNT = schema.int_schema(ge=0, le=2**53 - 1, strict=True)
_NUMBER = schema.float_schema(allow_inf_nan=False, strict=True)
_STEP = schema.nullable_schema(_NUMBER)
_POINT = schema.tuple_schema([_NUMBER] * 4)  # [index, step, value, time]
_SERIES = schema.typed_dict_schema(
    {
        "bucket_size": schema.typed_dict_field(schema.int_schema(ge=1, le=2**53 - 1, strict=True)),
        "count": schema.typed_dict_field(_COUNT),
        # [attempt, count, first, min, max, last]
        "buckets": schema.typed_dict_field(schema.list_schema(schema.tuple_schema([_COUNT, _COUNT, *[_POINT] * 4]))),
    }
)
_MARKER = schema.typed_dict_schema(
    {
        "kind": schema.typed_dict_field(
            schema.literal_schema(["restart", "rollback", "eval", "checkpoint", "stop", "finished"])
        ),
        "step": schema.typed_dict_field(_STEP),
        "attempt": schema.typed_dict_field(_COUNT),
        "label": schema.typed_dict_field(schema.nullable_schema(schema.str_schema(strict=True))),
        "time_us": schema.typed_dict_field(_NUMBER),
    }
)
_RUN = schema.typed_dict_schema(
    {
        "run_id": schema.typed_dict_field(schema.str_schema(strict=True)),
        "attempt": schema.typed_dict_field(_COUNT),
        "last_step": schema.typed_dict_field(_STEP),
        "restarts": schema.typed_dict_field(schema.list_schema(schema.tuple_schema([_NUMBER, _NUMBER]))),
        "series": schema.typed_dict_field(schema.dict_schema(schema.str_schema(), _SERIES, strict=True)),
        "markers": schema.typed_dict_field(schema.list_schema(_MARKER)),
        "dropped_markers": schema.typed_dict_field(_COUNT),
    }
)
#: the snapshot's shape; its state and events are checked by their own readers' rules below
_SNAPSHOT = SchemaValidator(
    schema.typed_dict_schema(
        {
            "snapshot_version": schema.typed_dict_field(
                schema.int_schema(ge=SNAPSHOT_VERSION, le=SNAPSHOT_VERSION, strict=True)
            ),
            "run_id": schema.typed_dict_field(schema.str_schema(strict=True)),
            "stream_offset": schema.typed_dict_field(_COUNT),
            "store": schema.typed_dict_field(
                schema.typed_dict_schema(
                    {
                        "max_points": schema.typed_dict_field(_COUNT),
                        "max_markers": schema.typed_dict_field(_COUNT),
                        "runs": schema.typed_dict_field(schema.list_schema(_RUN)),
                    }
                )
            ),
            "state": schema.typed_dict_field(schema.dict_schema(strict=True)),
            "events": schema.typed_dict_field(
                schema.list_schema(schema.dict_schema(strict=True), max_length=MAX_VIEW_EVENTS)
            ),
        }
    )
)


def read_trusted_snapshot(path: Path, run_id: str, *, within: Path | None = None) -> dict[str, Any] | None:
    """The snapshot at `path` (`read_capped` under `MAX_SNAPSHOT_BYTES`, `within`) when it is a
    version-2 snapshot of `run_id` whose parts are each of the shape their readers take
    (`SeriesStore.from_dict`, `RunStateFold`'s resume, `ViewEvents`); None otherwise."""
    try:
        data = read_capped(path, MAX_SNAPSHOT_BYTES, within=within)
        _SNAPSHOT.validate_json(data)  # nested past 200 levels: a ValueError, as any shape it fails
    except (OSError, ValueError):  # pydantic-core's ValidationError is a ValueError
        return None
    snapshot: dict[str, Any] = from_json(data)
    state = snapshot["state"]
    if snapshot["run_id"] != run_id or not any(run["run_id"] == run_id for run in snapshot["store"]["runs"]):
        return None
    if state.get("run_id") != run_id or not _is_run_state(state) or not _are_view_events(snapshot["events"], run_id):
        return None
    return snapshot


def _is_run_state(state: dict[str, Any]) -> bool:
    try:
        _run_state_model().model_validate_json(dumps(state), strict=True)
    except ValueError:  # pydantic's ValidationError is a ValueError
        return False
    return True


@functools.cache
def _run_state_model() -> Any:
    # pydantic's models are imported when a snapshot is first read, as the summary's are
    from trainwire._generated.reader_state import RunStateRecord

    return RunStateRecord


def _are_view_events(events: list[dict[str, Any]], run_id: str) -> bool:
    """The run's view events, each a line the decoder accepts."""
    if not all(event.get("run_id") == run_id and event.get("event") in VIEW_EVENTS for event in events):
        return False
    lines = "".join(dumps(event) + "\n" for event in events).encode("utf-8")
    return len(Decoder(diagnostics=DiagnosticLog()).feed(lines).dicts) == len(events)
