"""Facts of the contract written between markers in hand-written docs.

A marked region is `<!-- generated: NAME -->...<!-- end: NAME -->` (a block on lines of its
own, or inline in a sentence); `make generate` rewrites what stands between, so the drift
check of `make check` finds a hand edit or a stale text. Each name is rendered once here.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import contract_facts
from _common import ROOT, SCHEMAS, rewrite_hand_written

#: the docs that hold marked regions; each must hold at least one
DOCS = ("docs/stop.md", "docs/writer-rules.md", "docs/python.md")
_REGION = re.compile(r"(<!-- generated: ([a-z-]+) -->)(.*?)(<!-- end: \2 -->)", re.DOTALL)


def _exit_code_table(exit_codes: dict[str, Any]) -> str:
    rows = [f"| `{entry['status']}` | {entry['exit_code']} | {entry['meaning']} |" for entry in exit_codes["statuses"]]
    extra = exit_codes["not_finished"]
    rows.append(f"| (no `run.finished`) | {extra['exit_code']} | {extra['meaning']} |")
    pending = exit_codes["stop_pending"]
    rows.append(f"| (no `stop.requested`) | {pending['exit_code']} | {pending['meaning']} |")
    return "\n" + "\n".join(["| status of `run.finished` | exit code | meaning |", "|---|---|---|", *rows]) + "\n"


def _event_model_table(titles: dict[str, str]) -> str:
    rows = [f"| `{title}` | The model of `{name}`. |" for name, title in titles.items()]
    return "\n" + "\n".join(["| name | what it is |", "|---|---|", *rows]) + "\n"


#: region name -> what it holds, from the contract facts
RENDERERS: dict[str, Callable[[dict[str, Any]], str]] = {
    "event-models": lambda facts: _event_model_table(facts["events"]),
    "exit-codes": lambda facts: _exit_code_table(facts["exit_codes"]),
    "exit-codes-inline": lambda facts: contract_facts.exit_codes_text(facts["exit_codes"]),
    "tail-exit-codes-inline": lambda facts: contract_facts.tail_exit_codes_text(facts["exit_codes"]),
}


def fill(text: str, facts: dict[str, Any], where: str) -> str:
    """`text` with every marked region rewritten; an unknown name or no region at all is an error."""

    def region(match: re.Match[str]) -> str:
        name = match.group(2)
        if name not in RENDERERS:
            raise SystemExit(f"{where}: unknown generated region {name!r} (known: {', '.join(RENDERERS)})")
        return match.group(1) + RENDERERS[name](facts) + match.group(4)

    filled, count = _REGION.subn(region, text)
    if count == 0:
        raise SystemExit(f"{where}: no generated region; remove it from gen_doc_tables.DOCS")
    return filled


def generate(out_root: Path, bundles: Path) -> None:
    facts = contract_facts.derive(bundles)
    rewrite_hand_written(out_root, DOCS, lambda text, rel: fill(text, facts, rel))


if __name__ == "__main__":
    generate(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT, SCHEMAS / "bundled")
