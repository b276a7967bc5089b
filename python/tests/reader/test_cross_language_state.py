"""Python and TypeScript readers give byte-identical canonical state (messages aside).

Over every stream of the conformance suite, read whole by each reader in its own
language; the chunked and fuzzed comparisons run through the harnesses in conformance/.
"""

from __future__ import annotations

import json
from pathlib import Path

from support.typescript_side import typescript_lines

from trainwire.conformance.paths import cases_dir
from trainwire.reader.state import StreamReader

CASES = sorted(cases_dir().iterdir())


def _python_state(case: dict, stream: Path) -> str:
    reader = StreamReader()
    reader.feed(stream.read_bytes())
    reader.finish()
    state = reader.to_dict(case.get("now"), case.get("stale_after_s"))
    for diagnostic in state["diagnostics"]:
        diagnostic["message"] = ""
    from trainwire.contract import canonical

    return canonical.dumps(state)


def test_every_conformance_stream_gives_the_same_canonical_bytes_in_both_languages() -> None:
    cases = [json.loads((case / "case.json").read_text(encoding="utf-8")) for case in CASES]
    streams = [case / "stream.ndjson" for case in CASES]
    request = [
        {"path": str(stream), "now": case.get("now"), "stale_after_s": case.get("stale_after_s")}
        for case, stream in zip(cases, streams, strict=False)
    ]
    typescript = typescript_lines("canonical-states.js", request)
    assert len(typescript) == len(CASES) >= 24
    assert len(set(typescript)) == len(CASES)  # every case is a different state: nothing trivial compared
    for case, stream, ts_state in zip(cases, streams, typescript, strict=False):
        assert _python_state(case, stream) == ts_state, case["id"]


T0 = "2026-11-29T10:00:00.000000Z"
#: status, last line's time, heartbeat interval, now, stale-after -> the status both languages give
STATUS_AT_CASES = [
    ("running", T0, 5, "2026-11-29T10:00:15.000000Z", None, "running"),  # exactly three intervals: not yet
    ("running", T0, 5, "2026-11-29T10:00:15.000001Z", None, "stale"),
    ("running", T0, None, "2026-11-29T11:00:00.000000Z", None, "running"),  # no heartbeat, no limit: never
    ("running", T0, None, "2026-11-29T10:00:02.000001Z", 2, "stale"),
    ("running", T0, 5, "2026-11-29T10:00:02.000001Z", 2, "stale"),  # stale-after wins over heartbeats
    ("running", T0, 1, "2026-11-29T10:00:02.000001Z", 30, "running"),
    ("running", T0, None, "2026-11-29T10:00:00.000002Z", 0.0000025, "running"),  # 2.5 us rounds half up to 3
    ("running", T0, None, "2026-11-29T10:00:00.000003Z", 0.0000025, "running"),
    ("running", T0, None, "2026-11-29T10:00:00.000004Z", 0.0000025, "stale"),
    ("running", T0, 0.1, "2026-11-29T10:00:00.300000Z", None, "running"),  # 3 * 0.1 is 0.30000000000000004
    ("running", T0, 0.1, "2026-11-29T10:00:00.300001Z", None, "stale"),
    ("running", "2026-11-29T12:00:00+02:00", 5, "2026-11-29T10:00:15.000001Z", None, "stale"),  # an offset
    ("running", None, 5, "2026-11-29T11:00:00.000000Z", None, "running"),  # no line yet
    ("running", T0, 5, None, None, "running"),  # no current time
    ("succeeded", T0, 5, "2026-11-29T11:00:00.000000Z", None, "succeeded"),  # only a running run turns stale
    ("failed", T0, None, "2026-11-29T11:00:00.000000Z", 1, "failed"),
]


def test_staleness_is_one_function_that_both_languages_answer_alike() -> None:
    from trainwire.contract.clock import to_timestamp_us
    from trainwire.contract.liveness import status_at

    fields = ("status", "last_ts", "heartbeat_interval_s", "now", "stale_after_s")
    typescript = typescript_lines("status-at.js", [dict(zip(fields, case, strict=False)) for case in STATUS_AT_CASES])
    for case, ts_answer in zip(STATUS_AT_CASES, typescript, strict=True):
        status, last_ts, heartbeat, now, stale_after, expected = case
        now_us = None if now is None else to_timestamp_us(now)
        assert status_at(status, last_ts, heartbeat, now_us, stale_after) == expected, case
        assert json.loads(ts_answer) == expected, case
