"""The view events a snapshot keeps are the lines the dashboard page's worker hands its panels."""

from __future__ import annotations

import re

from support.paths import ROOT

from trainwire._generated.contract import EVENT_NAMES
from trainwire.lines.view_events import VIEW_EVENTS

FEED_MESSAGES = ROOT / "typescript" / "dashboard" / "feed-messages.ts"


def test_view_events_are_the_twin_of_the_pages_view_events() -> None:
    found = re.search(
        r"const VIEW_EVENTS: ReadonlySet<string> = new Set\(\[(.*?)\]\)", FEED_MESSAGES.read_text("utf-8"), re.DOTALL
    )
    assert found is not None, f"{FEED_MESSAGES}: VIEW_EVENTS not found"
    assert set(re.findall(r'"([a-z_.]+)"', found.group(1))) == VIEW_EVENTS
    assert set(EVENT_NAMES) >= VIEW_EVENTS
