"""The TypeScript harness template, set up as a third party would (the npm package in its
node_modules, the template compiled), passes every reader case of the suite."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from conformance_support import ROOT, conformance, outcomes, report_of

from trainwire.conformance.cases import load_cases
from trainwire.conformance.paths import cases_dir

TEMPLATE = ROOT / "conformance" / "examples" / "reader_harness.ts"
PACKAGE = ROOT / "typescript"


def test_the_template_is_short() -> None:
    assert len(TEMPLATE.read_text(encoding="utf-8").splitlines()) < 60


def test_the_template_passes_every_reader_case(tmp_path: Path) -> None:
    project = tmp_path / "my-reader"
    (project / "node_modules").mkdir(parents=True)
    os.symlink(PACKAGE, project / "node_modules" / "trainwire")  # as `npm install trainwire` would place it
    shutil.copy(TEMPLATE, project / "reader_harness.ts")
    (project / "package.json").write_text('{"type": "module"}\n', encoding="utf-8")
    esbuild = PACKAGE / "node_modules" / ".bin" / "esbuild"
    subprocess.run([str(esbuild), "reader_harness.ts", "--outfile=reader_harness.js", "--platform=node", "--format=esm", "--log-level=warning"],
                   cwd=project, check=True, timeout=120)  # fmt: skip
    completed = conformance("run", "--harness", f"node '{project / 'reader_harness.js'}'", "--role", "reader", "--json")
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-2000:]
    (harness,) = report_of(completed)["harnesses"]
    assert harness["implementation"]["name"] == "my-reader"
    results = outcomes(harness)
    reader_cases = {case.id for case in load_cases(cases_dir()) if "reader" in case.roles}
    assert {case for case, role in results if role == "reader"} == reader_cases
    assert all(result["outcome"] == "passed" for result in results.values())
