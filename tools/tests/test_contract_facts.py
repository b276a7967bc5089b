"""The contract facts hand-written code needs come from the schemas, and nothing copies them."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import check
import contract_facts
import gen_contract
import pytest
from _common import ROOT

BUNDLES = ROOT / "schemas" / "bundled"
HAND_WRITTEN = [
    *(p for p in (ROOT / "python" / "src" / "trainwire").rglob("*.py") if "_generated" not in p.parts),
    *(p for p in (ROOT / "typescript" / "src").rglob("*.ts") if "generated" not in p.parts),
]


@pytest.fixture()
def bundles(tmp_path: Path) -> Path:
    copy = tmp_path / "bundled"
    shutil.copytree(BUNDLES, copy)
    return copy


def _edit(bundles: Path, family: str, change) -> None:
    path = bundles / f"{family}.schema.json"
    schema = json.loads(path.read_text(encoding="utf-8"))
    change(schema)
    path.write_text(json.dumps(schema), encoding="utf-8")


def test_a_schema_change_reaches_the_generated_facts(bundles: Path) -> None:
    def change(schema: dict) -> None:
        defs = schema["$defs"]
        defs["RunId"]["pattern"] = "^[a-z]{1,8}$"
        defs["Envelope"]["properties"]["x_host"] = {"type": "string"}
        defs["TrainEpoch"]["properties"]["note"] = {"type": "string"}
        for name, field in (("ErrorInfo", "message"), ("StopRequested", "reason"), ("StopRequested", "requested_by")):
            defs[name]["properties"][field]["maxLength"] = 64

    _edit(bundles, "trainwire-v1", change)
    facts = contract_facts.derive(bundles)
    assert facts["run_id_pattern"] == "[a-z]{1,8}"
    assert facts["envelope_fields"][-1] == "x_host"
    assert facts["message_limit"] == 64
    assert "note" in facts["null_rules"]["TrainEpoch"]["not_nullable"]
    python = gen_contract.render_python(facts)
    assert "RUN_ID_PATTERN: Final = '[a-z]{1,8}'" in python and "MESSAGE_LIMIT: Final = 64" in python
    assert 'export const RUN_ID_PATTERN = "^[a-z]{1,8}$";' in gen_contract.render_typescript(facts)


def test_the_clipped_texts_must_share_one_limit(bundles: Path) -> None:
    _edit(
        bundles,
        "trainwire-v1",
        lambda schema: schema["$defs"]["StopRequested"]["properties"]["reason"].update(maxLength=300),
    )
    with pytest.raises(SystemExit, match="one maxLength"):
        contract_facts.derive(bundles)


def test_the_code_table_must_list_the_schema_diagnostic_codes(bundles: Path) -> None:
    _edit(
        bundles,
        "reader-state-v1",
        lambda schema: schema["$defs"]["Diagnostic"]["properties"]["code"]["enum"].append("new_code"),
    )
    with pytest.raises(SystemExit, match="differ from the Diagnostic schema"):
        contract_facts.derive(bundles)


def test_the_nested_null_rules_name_the_object_that_holds_them() -> None:
    rules = contract_facts.derive(BUNDLES)["null_rules"]
    assert rules["RunStarted"]["nested"] == {"provenance": "Provenance"}
    assert "stage" in rules["Envelope"]["not_nullable"]


def test_no_hand_written_module_copies_a_fact() -> None:
    facts = contract_facts.derive(BUNDLES)
    copies = {
        "run id pattern": facts["run_id_pattern"],
        "event name pattern": facts["event_name_pattern"],
        "relative path segment": r"[^/\\:.][^/\\:]*",
        "envelope fields": '"schema_version", "seq", "ts", "run_id", "event", "stage"',
        "schema families": '"trainwire-v1", "reader-state-v1"',
    }
    found = []
    for path in HAND_WRITTEN:
        text = path.read_text(encoding="utf-8")
        found += [f"{path.relative_to(ROOT)}: {what}" for what, copy in copies.items() if copy in text]
        if re.search(r"\b(MESSAGE_LIMIT|[A-Z_]*LIMIT)\s*=\s*200\b", text):
            found.append(f"{path.relative_to(ROOT)}: message limit")
    assert found == []


def test_the_generated_facts_are_covered_by_the_drift_gate(generated_copy: Path) -> None:
    root = generated_copy
    edited = [gen_contract.PYTHON_MODULE, gen_contract.TYPESCRIPT_MODULE]
    for rel in edited:
        (root / rel).write_text((root / rel).read_text(encoding="utf-8").replace("200", "201"), encoding="utf-8")
    problems = check.drifted_files(root)
    for rel in edited:
        assert any(problem.startswith(f"{rel}: differs") for problem in problems), problems
