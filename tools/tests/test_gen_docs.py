"""docs/reference/events.md and codes.md say everything the schemas and the code table say."""

from __future__ import annotations

import json
import re

from _common import ROOT

EVENTS = (ROOT / "docs" / "reference" / "events.md").read_text(encoding="utf-8")
CODES = (ROOT / "docs" / "reference" / "codes.md").read_text(encoding="utf-8")


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes."""
    return re.sub(r"[^a-z0-9 _-]", "", heading.strip().lower()).replace(" ", "-")


def test_every_link_of_the_events_reference_has_its_heading() -> None:
    anchors = {_anchor(heading) for heading in re.findall(r"^#+ (.+)$", EVENTS, re.MULTILINE)}
    links = set(re.findall(r"\]\(#([^)]+)\)", EVENTS))
    assert links and links - anchors == set()


def test_every_object_has_a_description_and_the_patterns_are_shown() -> None:
    sections = re.split(r"^### ", EVENTS, flags=re.MULTILINE)[1:]
    for section in sections:
        name, _, body = section.partition("\n")
        assert body.strip().split("\n")[0].strip(), f"{name} has no description"
    bundle = json.loads((ROOT / "schemas" / "bundled" / "trainwire-v1.schema.json").read_text(encoding="utf-8"))
    for pattern in (bundle["$defs"]["RunId"]["pattern"], bundle["$defs"]["Envelope"]["properties"]["event"]["pattern"]):
        assert f"`{pattern}`" in EVENTS


def test_every_code_is_listed_with_its_meaning() -> None:
    table = json.loads((ROOT / "conformance" / "codes.json").read_text(encoding="utf-8"))["codes"]
    for entry in table:
        assert f"| `{entry['code']}` |" in CODES and entry["meaning"].split("`")[0] in CODES
