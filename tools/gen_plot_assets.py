"""The chart library of `trainwire plot`: uPlot's browser build, copied from the npm package.

The dashboard and the Python package draw with the same uPlot release: the version pinned in
typescript/package.json. The files are copied byte for byte (with uPlot's licence) into the
Python package, so that a plot written without network access still draws.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from _common import ROOT

#: what the HTML plot embeds, from the uplot npm package
FILES = ("dist/uPlot.iife.min.js", "dist/uPlot.min.css", "LICENSE")
TARGET = Path("python/src/trainwire/cli/assets/vendor")


def generate(out_root: Path) -> None:
    package = ROOT / "typescript" / "node_modules" / "uplot"
    if not package.is_dir():
        raise SystemExit(f"{package}: missing; run `make setup` (npm ci) first")
    target = out_root / TARGET
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for name in FILES:
        shutil.copyfile(package / name, target / Path(name).name)
