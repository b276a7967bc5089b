"""Regenerate the conformance goldens: `python tools/gen_conformance.py [CASE_ID ...]`.

Each case's `stream.ndjson` is its scenario played by the reference writer (or, for a
derived case, a base scenario transformed byte by byte); each `expected-state.json` is
what the reference reader folds from that stream. `case.json` and `scenario.json` are
the hand-written sources.
"""

from __future__ import annotations

import sys
from pathlib import Path

from trainwire.conformance.cases import load_cases
from trainwire.conformance.generate import Generator
from trainwire.conformance.paths import cases_dir

ROOT = Path(__file__).resolve().parents[1]
CASES = cases_dir()


def main(argv: list[str]) -> int:
    generator = Generator(CASES)
    changed = [path for case in load_cases(CASES, argv or None) for path in generator.write(case)]
    for path in changed:
        print(f"gen_conformance: wrote {path.relative_to(ROOT)}")
    print(f"gen_conformance: {len(generator.cases)} cases, {len(changed)} files changed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
