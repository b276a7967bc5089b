"""The chart specification is refused when Python and JavaScript could place a series apart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gen_charts
import pytest
from _common import ROOT


def _spec_with(tmp_path: Path, change: Any) -> Path:
    spec = json.loads((ROOT / gen_charts.SOURCE).read_text(encoding="utf-8"))
    change(spec)
    (tmp_path / gen_charts.SOURCE).parent.mkdir(parents=True)
    (tmp_path / gen_charts.SOURCE).write_text(json.dumps(spec), encoding="utf-8")
    return tmp_path


def test_the_committed_specification_loads() -> None:
    spec = gen_charts.load()
    assert "$comment" not in spec and spec["charts"][-1]["kind"] == "custom"


@pytest.mark.parametrize(("change", "message"), [
    (lambda spec: spec["charts"][0].update(match=r"^loss\d*$"), "read differently"),
    (lambda spec: spec["charts"][0].update(match="^(?P<name>loss)$"), "read differently"),
    (lambda spec: spec["charts"][0].update(kind="throughput"), "unknown kind"),
    (lambda spec: spec["charts"][1].update(title="$2"), "names group 2"),
    (lambda spec: spec["charts"].pop(), "the last chart must take every name"),
    (lambda spec: spec["charts"][-1].update(match="^([^\n]+)$"), "the last chart must take every name"),
    (lambda spec: spec["charts"][0].update(match=r"^loss\Z"), "read differently"),
    (lambda spec: spec["markers"].append(spec["markers"][0]), "defined twice"),
])  # fmt: skip
def test_a_specification_the_renderers_could_read_apart_is_refused(tmp_path: Path, change: Any, message: str) -> None:
    with pytest.raises(SystemExit, match=message):
        gen_charts.load(_spec_with(tmp_path, change))


def test_patterns_are_compiled_as_javascript_reads_them_with_the_s_flag() -> None:
    pattern = gen_charts.python_pattern(r"^(.+)[$]\$$")
    assert pattern.pattern == r"^(.+)[$]\$\Z"
    assert pattern.search("a\nb$$") is not None and pattern.search("a\nb$$\n") is None
    assert gen_charts.python_pattern("^loss$").search("loss\n") is None
