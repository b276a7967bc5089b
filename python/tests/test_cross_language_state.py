"""Python and TypeScript readers give byte-identical canonical state (messages aside).

Over every stream of the conformance suite, read whole by each reader in its own
language; the chunked and fuzzed comparisons run through the harnesses in conformance/.
"""

from __future__ import annotations

import json
from pathlib import Path

from typescript_side import typescript_lines

from trainwire.conformance.paths import cases_dir
from trainwire.reader.state import StreamReader

ROOT = Path(__file__).resolve().parents[2]
CASES = sorted(cases_dir().iterdir())


def _python_state(case: dict, stream: Path) -> str:
    reader = StreamReader()
    reader.feed(stream.read_bytes())
    reader.finish()
    state = reader.to_dict(case.get("now"), case.get("stale_after_s"))
    for diagnostic in state["diagnostics"]:
        diagnostic["message"] = ""
    from trainwire.contract import canonical

    return canonical.dumps(state)


def test_every_conformance_stream_gives_the_same_canonical_bytes_in_both_languages() -> None:
    cases = [json.loads((case / "case.json").read_text(encoding="utf-8")) for case in CASES]
    streams = [case / "stream.ndjson" for case in CASES]
    request = [
        {"path": str(stream), "now": case.get("now"), "stale_after_s": case.get("stale_after_s")}
        for case, stream in zip(cases, streams)
    ]
    typescript = typescript_lines("ts_canonical_states.mjs", request)
    assert len(typescript) == len(CASES) >= 24
    assert len(set(typescript)) == len(CASES)  # every case is a different state: nothing trivial compared
    for case, stream, ts_state in zip(cases, streams, typescript):
        assert _python_state(case, stream) == ts_state, case["id"]
