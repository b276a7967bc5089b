"""`make generate`: everything derived from the schemas, in dependency order.

With an argument, writes into that directory instead of the repository (the drift
check generates into a temporary tree and compares).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import bundle
import gen_charts
import gen_contract
import gen_doc_tables
import gen_docs
import gen_events
import gen_known_event_dicts
import gen_python
import gen_scenario_plays
import gen_series_check
import gen_source_regions
from _common import ROOT

#: every path `generate` writes, relative to the root; the drift check compares exactly these
GENERATED = (
    "schemas/bundled",
    "schemas/v1/line.schema.json",
    "python/src/trainwire/_generated",
    "typescript/src/generated",
    "docs/reference/events.md",
    "docs/reference/codes.md",
    *gen_doc_tables.DOCS,
    *gen_source_regions.SOURCES,
)


def generate(out_root: Path) -> None:
    bundles = out_root / "schemas" / "bundled"
    gen_events.generate(out_root)
    bundle.main(bundles)
    gen_python.generate(out_root, bundles)
    gen_contract.generate(out_root, bundles)
    gen_charts.generate(out_root)
    gen_known_event_dicts.generate(out_root, bundles)
    gen_series_check.generate(out_root, bundles)
    gen_scenario_plays.generate(out_root, bundles)
    subprocess.run(["node", str(ROOT / "tools" / "gen_typescript.mjs"), str(out_root)], check=True, cwd=ROOT)
    gen_docs.generate(out_root, bundles)
    gen_doc_tables.generate(out_root, bundles)
    gen_source_regions.generate(out_root, bundles)


if __name__ == "__main__":
    generate(Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else ROOT)
