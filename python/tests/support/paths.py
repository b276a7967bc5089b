"""Where the tests find the repository: one place, so a test's depth in the tree never counts."""

from __future__ import annotations

from pathlib import Path

#: the repository root (python/tests/support -> python/tests -> python -> root)
ROOT = Path(__file__).resolve().parents[3]
#: the package's sources
SOURCES = ROOT / "python" / "src" / "trainwire"
#: the scripts the tests run as their own processes (python and node)
SCRIPTS = Path(__file__).resolve().parent / "scripts"
#: the Chromium scripts, written in TypeScript (typescript/test/browser) and compiled by
#: `npm run build`, as the dashboard page they drive
BROWSER_SCRIPTS = ROOT / "typescript" / "dist" / "test" / "browser"
#: the scripts that give the TypeScript package's answers to the cross-language tests, written in
#: TypeScript (typescript/test/cross-language) and compiled by `npm run build`
CROSS_LANGUAGE_SCRIPTS = ROOT / "typescript" / "dist" / "test" / "test" / "cross-language"
