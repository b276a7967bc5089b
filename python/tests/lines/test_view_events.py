"""The view events a snapshot keeps are the events whose schemas mark them, the lines the
dashboard page's worker hands its panels: one generated set in both languages."""

from __future__ import annotations

import json
import re

from support.paths import ROOT

from trainwire._generated.contract import EVENT_NAMES
from trainwire.lines.view_events import VIEW_EVENTS, ViewEvents

FEED_MESSAGES = ROOT / "typescript" / "dashboard" / "feed-messages.ts"
EVENT_SCHEMAS = ROOT / "schemas" / "v1" / "events"


def test_the_view_events_are_the_events_whose_schemas_mark_them() -> None:
    schemas = [json.loads(path.read_text("utf-8")) for path in EVENT_SCHEMAS.glob("*.schema.json")]
    marked = {schema["properties"]["event"]["const"] for schema in schemas if schema["x-trainwire-view-event"]}
    kept = ViewEvents({"event": name, "seq": seq} for seq, name in enumerate(EVENT_NAMES)).to_list()
    assert {line["event"] for line in kept} == marked == VIEW_EVENTS
    assert {"run.heartbeat", "phase.progress", "train.step"}.isdisjoint(marked)


def test_the_page_takes_the_generated_view_events() -> None:
    source = FEED_MESSAGES.read_text("utf-8")
    assert re.search(r'^export \{ VIEW_EVENTS \} from "\.\./src/generated/contract\.js";$', source, re.M)
    assert "new Set([" not in source, "the page's view events are generated, not listed here"
