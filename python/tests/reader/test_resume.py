"""Resuming from a saved reader state: the runs go on, so sequence gaps and staleness are
still detected, with the same state as an uninterrupted read, in Python and TypeScript alike."""

from __future__ import annotations

import json

from support.typescript_side import typescript_lines

from trainwire.conformance.paths import cases_dir
from trainwire.contract import canonical
from trainwire.reader.state import StreamReader

CASES = sorted(cases_dir().iterdir())


def _line(seq: int, name: str, second: int, **payload: object) -> bytes:
    envelope = {
        "schema_version": 1,
        "seq": seq,
        "ts": f"2026-11-29T10:00:{second:02d}.000000Z",
        "run_id": "r1",
        "event": name,
    }
    return json.dumps({**envelope, **payload}).encode() + b"\n"


def _split(data: bytes) -> int:
    """A byte offset just after a newline near the middle (0 when there is none)."""
    return data.rfind(b"\n", 0, len(data) // 2 + 1) + 1


def _resumed(data: bytes, at: int) -> StreamReader:
    first = StreamReader()
    first.feed(data[:at])
    reader = StreamReader(resume=json.loads(json.dumps(first.to_dict())))
    reader.feed(data[reader.consumed_bytes :])
    return reader


def test_a_resumed_reader_still_sees_a_sequence_gap_and_a_silent_run() -> None:
    started = _line(
        1, "run.started", 0, producer={"name": "t", "version": "1"}, total_steps=None, heartbeat_interval_s=5
    )
    later = _line(4, "run.heartbeat", 1)
    first = StreamReader()
    first.feed(started)
    saved = json.loads(json.dumps(first.to_dict(now="2026-11-29T11:00:00Z")))
    assert saved["runs"][0]["status"] == "stale"
    reader = StreamReader(resume=saved)
    assert reader.consumed_bytes == len(started)
    reader.feed(later)
    run = reader.latest_run()
    assert run is not None and run.seq_gaps == [[2, 4]] and run.status == "running"
    state = reader.to_dict(now="2026-11-29T10:00:17Z")
    assert state["runs"][0]["status"] == "stale"
    assert [d["code"] for d in state["diagnostics"]] == ["seq_gap"]
    assert state["lines"] == 2


def test_resuming_mid_stream_gives_the_uninterrupted_state_in_both_languages() -> None:
    cases = [json.loads((case / "case.json").read_text(encoding="utf-8")) for case in CASES]
    streams = [(case / "stream.ndjson").read_bytes() for case in CASES]
    request = [
        {
            "path": str(case / "stream.ndjson"),
            "now": spec.get("now"),
            "stale_after_s": spec.get("stale_after_s"),
            "resume_at": _split(data),
        }
        for case, spec, data in zip(CASES, cases, streams, strict=False)
    ]
    typescript = typescript_lines("canonical-states.js", request)
    assert len(typescript) == len(CASES)
    assert sum(1 for item in request if item["resume_at"] > 0) >= 20
    for spec, data, item, ts_state in zip(cases, streams, request, typescript, strict=False):
        whole = StreamReader()
        whole.feed(data)
        resumed = _resumed(data, item["resume_at"])
        expected = whole.to_dict(spec.get("now"), spec.get("stale_after_s"))
        state = resumed.to_dict(spec.get("now"), spec.get("stale_after_s"))
        assert canonical.dumps(state) == canonical.dumps(expected), spec["id"]
        for diagnostic in state["diagnostics"]:
            diagnostic["message"] = ""
        assert canonical.dumps(state) == ts_state, spec["id"]
