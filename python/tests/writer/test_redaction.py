"""Writer rule 8: the table in docs/writer-rules.md is the data, every row a case."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from support.paths import ROOT

from trainwire.writer.fields import error_info
from trainwire.writer.redaction import REDACTED, redact_config, redact_text
from trainwire.writer.run import Run
from trainwire.writer.sinks import MemorySink

RULES = ROOT / "docs" / "writer-rules.md"
_ROW = re.compile(r"^\| `(?P<key>[^`]+)` \| `(?P<value>.+)` \| `(?P<written>.+)` \|$")


def _table() -> list[tuple[list[str], Any, Any]]:
    text = RULES.read_text(encoding="utf-8")
    body = text.split("<!-- redaction-table")[1].split("<!-- end of redaction-table")[0]
    rows = []
    for line in body.splitlines():
        match = _ROW.match(line)
        if match:
            rows.append((match["key"].split(" / "), json.loads(match["value"]), json.loads(match["written"])))
    return rows


TABLE = _table()


def _nested(path: list[str], value: Any) -> dict[str, Any]:
    for key in reversed(path):
        value = {key: value}
    return value


def test_the_table_is_large_and_has_both_kinds_of_rows() -> None:
    assert len(TABLE) >= 40
    secret = [row for row in TABLE if row[2] == REDACTED]
    assert len(secret) >= 20 and len(TABLE) - len(secret) >= 15


@pytest.mark.parametrize(("path", "value", "written"), TABLE, ids=[" / ".join(row[0]) for row in TABLE])
def test_each_row_of_the_documented_table(path: list[str], value: Any, written: Any) -> None:
    assert redact_config(_nested(path, value)) == _nested(path, written)


def test_the_whole_table_in_one_config_reaches_the_stream_redacted() -> None:
    config: dict[str, Any] = {}
    expected: dict[str, Any] = {}
    for path, value, written in TABLE:
        config.setdefault(path[0], {}) if len(path) > 1 else None
        if len(path) > 1:
            config[path[0]][path[1]] = value
            expected.setdefault(path[0], {})[path[1]] = written
        else:
            config[path[0]] = value
            expected[path[0]] = written
    sink = MemorySink()
    run = Run(run_id="redacted", sinks=[sink], heartbeat_interval_s=None, rank=0)
    run.start(config=config, provenance=False)
    run.finish()
    assert sink.events[0]["config"] == expected
    assert b"hf_abc" not in sink.getvalue() and b"sk-1" not in sink.getvalue()


def test_a_service_key_inside_a_list_of_mappings_is_a_secret() -> None:
    assert redact_config({"wandb": [{"key": "k", "entity": "e"}]}) == {"wandb": [{"key": REDACTED, "entity": "e"}]}


def test_secrets_in_error_messages_are_masked_before_the_cut() -> None:
    message = "connect postgres://trainer:hunter2@db/runs failed; HF_TOKEN=hf_secret " + "x" * 300
    info = error_info(RuntimeError(message))
    assert info is not None
    assert "hunter2" not in info["message"] and "hf_secret" not in info["message"]
    assert info["message"].startswith("connect postgres://trainer:<redacted>@db/runs failed; HF_TOKEN=<redacted> ")
    assert len(info["message"]) == 200
    sink = MemorySink()
    run = Run(run_id="failing", sinks=[sink], heartbeat_interval_s=None, rank=0)
    run.start(provenance=False)
    run.finish("failed", error=ValueError("header Authorization: Bearer eyJhbGciOi.x.y rejected"))
    assert sink.events[-1]["error"]["message"] == "header Authorization: Bearer <redacted> rejected"


def test_plain_text_is_kept_as_it_is() -> None:
    for text in ("loss went up", "lr=0.1, warmup=10", "see https://example.com/a?page=2", "key: value"):
        assert redact_text(text) == text
