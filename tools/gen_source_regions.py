"""Lists of the contract written between markers in hand-written Python modules.

A marked region is a `# generated: NAME` line and a `# end: NAME` line at the same
indentation; `make generate` rewrites the lines between (indented as the markers are), so
the drift check of `make check` finds a hand edit or a stale list. The lists stay literals a
static checker reads (`__all__`, the typing imports), and importing the package loads
nothing more for them.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import contract_facts
from _common import ROOT, SCHEMAS, rewrite_hand_written

#: the modules that hold marked regions; each must hold at least one
SOURCES = ("python/src/trainwire/__init__.py", "python/src/trainwire/contract/models.py")
_REGION = re.compile(r"^([ \t]*)(# generated: ([a-z-]+)\n)(.*?)^(\1# end: \3)$", re.DOTALL | re.MULTILINE)

#: region name -> its lines, from the contract facts
RENDERERS: dict[str, Callable[[dict[str, Any]], list[str]]] = {
    # the event models, as a `from ... import (...)` lists them (sorted, as the import sorter wants)
    "event-model-imports": lambda facts: [f"{title}," for title in sorted(facts["events"].values())],
    # the event models' names in `__all__`, in the order of the contract
    "event-model-names": lambda facts: [f'"{title}",' for title in facts["events"].values()],
}


def fill(text: str, facts: dict[str, Any], where: str) -> str:
    """`text` with every marked region rewritten; an unknown name or no region at all is an error."""

    def region(match: re.Match[str]) -> str:
        indent, name = match.group(1), match.group(3)
        if name not in RENDERERS:
            raise SystemExit(f"{where}: unknown generated region {name!r} (known: {', '.join(RENDERERS)})")
        lines = "".join(f"{indent}{line}\n" for line in RENDERERS[name](facts))
        return f"{indent}{match.group(2)}{lines}{match.group(5)}"

    filled, count = _REGION.subn(region, text)
    if count == 0:
        raise SystemExit(f"{where}: no generated region; remove it from gen_source_regions.SOURCES")
    return filled


def generate(out_root: Path, bundles: Path) -> None:
    facts = contract_facts.derive(bundles)
    rewrite_hand_written(out_root, SOURCES, lambda text, rel: fill(text, facts, rel))


if __name__ == "__main__":
    generate(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT, SCHEMAS / "bundled")
