"""Producing the goldens: streams from the reference writer, states from the reference reader.

`tools/gen_conformance.py` writes what this module builds; `trainwire conformance check`
compares the committed files with it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from trainwire.conformance.cases import SCENARIO_FILE, STATE_FILE, STREAM_FILE, Case, load_cases
from trainwire.conformance.diff import json_text
from trainwire.conformance.transforms import derive

#: `run.started.process` as the writer writes it (no nested object, no brace in a host name)
_PROCESS = re.compile(rb',"process":\{[^{}]*\}')


def play_scenario(scenario: dict[str, Any]) -> bytes:
    """The golden stream of `scenario`, without `run.started.process`: it names this machine's
    process, which the normalisation ignores and a golden must not hold."""
    from trainwire.conformance.scenario import play

    return _PROCESS.sub(b"", play(scenario))


def reference_state(case: Case, stream: bytes) -> dict[str, Any]:
    """The state the Python reader folds from `stream` with the case's liveness inputs."""
    from trainwire.contract.canonical import dumps
    from trainwire.reader.state import read_state

    limit = {} if case.max_line_bytes is None else {"max_line_bytes": case.max_line_bytes}
    state = read_state(stream, now=case.now, stale_after_s=case.stale_after_s, **limit)
    # Through the canonical form, so the golden holds exactly what a harness would send.
    return json.loads(dumps(state))


def render_state(state: dict[str, Any]) -> bytes:
    """The expected state as committed: pretty, sorted, UTF-8 as is, lone surrogates escaped."""
    return (json_text(state, indent=2, sort_keys=True) + "\n").encode("utf-8")


class Generator:
    """Builds every case's golden files from the case definitions under one directory."""

    def __init__(self, cases_dir: Path) -> None:
        self.cases = {case.id: case for case in load_cases(cases_dir)}
        self._played: dict[str, bytes] = {}

    def played(self, case_id: str) -> bytes:
        """The stream the reference writer writes for a case's scenario."""
        if case_id not in self._played:
            scenario = self.cases[case_id].scenario()
            if scenario is None:
                raise ValueError(f"case {case_id!r} has no {SCENARIO_FILE} to play")
            self._played[case_id] = play_scenario(scenario)
        return self._played[case_id]

    def stream(self, case: Case) -> bytes:
        spec = case.derive
        if spec is None:
            return self.played(case.id)
        return derive(self.played(spec["base"]), spec.get("transforms", []), self.played)

    def files(self, case: Case) -> dict[str, bytes]:
        """The generated files of one case, by file name."""
        stream = self.stream(case)
        return {STREAM_FILE: stream, STATE_FILE: render_state(reference_state(case, stream))}

    def write(self, case: Case) -> list[Path]:
        """Writes a case's files; returns the ones that changed."""
        changed = []
        for name, content in self.files(case).items():
            path = case.path(name)
            if not path.is_file() or path.read_bytes() != content:
                path.write_bytes(content)
                changed.append(path)
        return changed
