"""A reader restarted at `consumed_bytes` with its saved state ends where one reader would."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainwire.conformance.paths import cases_dir
from trainwire.reader.state import StreamReader

CASES = cases_dir()
STREAMS = sorted(CASES.glob("*/stream.ndjson"))


def test_there_are_streams() -> None:
    assert len(STREAMS) > 20


def whole(data: bytes) -> dict:
    reader = StreamReader()
    reader.feed(data)
    return reader.to_dict()


@pytest.mark.parametrize("stream", STREAMS, ids=lambda path: path.parent.name)
def test_resuming_at_every_cut_gives_the_same_runs(stream: Path) -> None:
    data = stream.read_bytes()
    expected = whole(data)
    for cut in range(0, len(data) + 1, max(1, len(data) // 40)):
        first = StreamReader()
        first.feed(data[:cut])
        saved = first.to_dict()
        second = StreamReader(resume=saved)
        second.feed(data[saved["consumed_bytes"] :])
        state = second.to_dict()
        for key in ("runs", "lines", "consumed_bytes", "partial_tail_bytes", "unknown_events"):
            assert state[key] == expected[key], (cut, key)
        # the saved state carries the diagnostics of the part read before the cut
        found = [(d["line"], d["code"]) for d in state["diagnostics"]]
        assert found == [(d["line"], d["code"]) for d in expected["diagnostics"]], cut
