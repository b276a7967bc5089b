"""Timestamps read back: the writers' own form (six fraction digits, `Z`) of a minute seen just
before takes a short path, which must give what the full RFC 3339 parse gives."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trainwire.contract import clock

# 1970 to 2200, microseconds: the times a writer stamps
writer_times = st.integers(min_value=0, max_value=7_258_118_400_000_000).map(lambda us: clock.format_ts(us / 1e6))


@settings(max_examples=500, deadline=None)  # a stall of the machine is no failure of the parse
@given(st.lists(writer_times, min_size=1, max_size=20), st.data())
def test_the_short_path_agrees_with_the_full_parse(times: list[str], data: st.DataObject) -> None:
    # times of one minute after another, and of other minutes in between
    minute = data.draw(writer_times)[:17]
    same_minute = [minute + time[17:] for time in times]
    for time in [*same_minute, *times, *same_minute]:
        assert clock.parse_timestamp_us(time) == clock._parse_timestamp_us(time), time


@pytest.mark.parametrize("bad", ["10:00:5a.000000Z", "10:00: 5.000000Z", "10:00:05.00000aZ", "10:00:05.0000\u06630Z"])
def test_a_bad_time_in_a_known_minute_is_refused(bad: str) -> None:
    clock.parse_timestamp_us("2026-12-01T10:00:00.000000Z")  # the minute is known now
    with pytest.raises(ValueError):
        clock.parse_timestamp_us("2026-12-01T" + bad)
