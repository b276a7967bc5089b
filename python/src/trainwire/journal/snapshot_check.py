"""Whether a journal snapshot (`series.json`) read from a file anyone may have written can be
gone on from: under its cap, of the shape `schemas/series/` states, and agreeing with itself.

The shape is checked by a validator generated from the schema (`tools/gen_series_check.py`),
from the schema the page's `checkOpening` checks an opening's series by (its validator generated
from the same bundle), run over the bytes before anything else reads them. What a schema cannot state is
checked here: the run ids agree, `state` is the run's state by the reader state's run schema
(strictly), and each of `events` is the run's, a line the decoder accepts. A snapshot failing
any of it is not opened from: the stream is read.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from pydantic_core import SchemaValidator

from trainwire.contract.canonical import dumps
from trainwire.contract.files import read_capped
from trainwire.lines.decoder import Decoder, DiagnosticLog
from trainwire.lines.view_events import VIEW_EVENTS

__all__ = ["MAX_SNAPSHOT_BYTES", "SNAPSHOT_SHAPE", "read_trusted_snapshot"]

#: A full series is at most 1000 buckets of 4 points, some 170 KB of canonical JSON, and a run's
#: 256 trial curves (`MAX_TRIAL_CURVES`, a sixteenth of a series each) 1.7 MB together: 32 MiB
#: holds some 150 full series beside them, 1000 markers and 1000 view events. The store bounds
#: each series, not how many a run names, so the cap leaves that room.
MAX_SNAPSHOT_BYTES = 32 << 20

_GENERATED = Path(__file__).resolve().parent.parent / "_generated" / "series-snapshot.core-schema.json"
_VALIDATOR: dict[str, Any] = json.loads(_GENERATED.read_text(encoding="utf-8"))
#: validates a snapshot's bytes into the snapshot (an integer spelled `1.0` read as 1), by its schema
SNAPSHOT_SHAPE = SchemaValidator(_VALIDATOR["schema"], _VALIDATOR["config"])


def read_trusted_snapshot(path: Path, run_id: str, *, within: Path | None = None) -> dict[str, Any] | None:
    """The snapshot at `path` (`read_capped` under `MAX_SNAPSHOT_BYTES`, `within`) when it is a
    snapshot of `run_id` of the schema's shape whose parts are each what their readers take
    (`SeriesStore.from_dict`, `RunStateFold`'s resume, `ViewEvents`); None otherwise."""
    try:
        data = read_capped(path, MAX_SNAPSHOT_BYTES, within=within)
        snapshot: dict[str, Any] = SNAPSHOT_SHAPE.validate_json(data)  # nested too deep: a ValueError too
    except (OSError, ValueError):  # pydantic-core's ValidationError is a ValueError
        return None
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
