"""Generate the chart specification of each language from charts/charts.json.

The dashboard, the HTML plot (TypeScript) and the PNG/SVG plot (Python) group series into
charts and draw markers from these constants, so the three show the same charts. The
specification is checked here: a pattern the two regex engines could read differently, a
chart of an unknown kind or a title naming a group its pattern lacks stops the generation.

Each language gets the patterns compiled as JavaScript's RegExp with the `s` flag reads them:
`.` matches every character, line terminators included, and `$` only the end of the name (in
Python `\\Z` with DOTALL, since Python's `$` also matches before a final line feed). So a
series name the writer accepts with a line break in it lands on the same chart in both.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from _common import ROOT

SOURCE = Path("charts/charts.json")
PYTHON_MODULE = Path("python/src/trainwire/_generated/charts.py")
TYPESCRIPT_MODULE = Path("typescript/src/generated/charts.ts")

# Python's re and JavaScript's RegExp agree on plain groups, classes, anchors and
# alternation; they differ on (?...) extensions, on what \d, \w, \s and \b match, and
# JavaScript has no \A, \Z or \z.
_NOT_PORTABLE = re.compile(r"\(\?|\\[dDwWsSbBAZz]")
#: names the last rule must take: line terminators of either engine, controls, astral characters
_ANY_NAMES = ("any name", "a\nb", "c\rd", "e\u2028f", "g\u2029h", "i\x85j", "\x00", "\n", "\U0001f525", "x" * 10_000)


def load(root: Path = ROOT) -> dict[str, Any]:
    spec: dict[str, Any] = json.loads((root / SOURCE).read_text(encoding="utf-8"))
    spec.pop("$comment", None)
    _check(spec)
    return spec


def _check(spec: dict[str, Any]) -> None:
    kinds = [entry["kind"] for entry in spec["kinds"]]
    for pattern in _patterns(spec):
        if _NOT_PORTABLE.search(pattern):
            raise SystemExit(f"{SOURCE}: {pattern!r} is read differently by Python and JavaScript")
        re.compile(pattern)
    for chart in spec["charts"]:
        if chart["kind"] not in kinds:
            raise SystemExit(f"{SOURCE}: chart {chart['title']!r} has the unknown kind {chart['kind']!r}")
        groups = re.compile(chart["match"]).groups
        for number in re.findall(r"\$(\d)", chart["title"]):
            if not 1 <= int(number) <= groups:
                raise SystemExit(
                    f"{SOURCE}: the title {chart['title']!r} names group {number}, absent from {chart['match']!r}"
                )
    last = python_pattern(spec["charts"][-1]["match"])
    if any(last.search(name) is None for name in _ANY_NAMES):
        raise SystemExit(f"{SOURCE}: the last chart must take every name left, so that every series lands on a chart")
    marker_kinds = [marker["kind"] for marker in spec["markers"]]
    if len(set(marker_kinds)) != len(marker_kinds):
        raise SystemExit(f"{SOURCE}: a marker kind is defined twice")
    statuses = _final_statuses()
    for marker in spec["markers"]:
        unknown = sorted(set(marker.get("label_colours", {})) - statuses) if marker["kind"] == "finished" else []
        if unknown:
            raise SystemExit(f"{SOURCE}: the end marker colours {unknown}, not statuses of run.finished")


def python_pattern(pattern: str) -> re.Pattern[str]:
    """`pattern` as JavaScript reads it with the `s` flag: every `$` outside a class is `\\Z`."""
    out, in_class, escaped = [], False, False
    for char in pattern:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "[":
            in_class = True
        elif char == "]":
            in_class = False
        elif char == "$" and not in_class:
            char = r"\Z"
        out.append(char)
    return re.compile("".join(out), re.DOTALL)


def _patterns(spec: dict[str, Any]) -> list[str]:
    """Every rule's pattern in order, then the sparse series' one."""
    return [chart["match"] for chart in spec["charts"]] + [spec["series"]["sparse"]["match"]]


def _final_statuses() -> set[str]:
    """The statuses a `run.finished` may carry: the end marker's labels."""
    schema = json.loads((ROOT / "schemas/v1/events/run-finished.schema.json").read_text(encoding="utf-8"))
    return set(schema["properties"]["status"]["enum"])


def _python_literal(value: Any, depth: int) -> str:
    """`value` as Python source, laid out as json.dumps(indent=4) lays out JSON."""
    inner, outer = "    " * (depth + 1), "    " * depth
    if isinstance(value, dict):
        items = [f"{inner}{key!r}: {_python_literal(item, depth + 1)}," for key, item in value.items()]
        return "{\n" + "\n".join(items) + f"\n{outer}}}" if items else "{}"
    if isinstance(value, list) and any(isinstance(item, (dict, list)) for item in value):
        return "[\n" + "\n".join(f"{inner}{_python_literal(item, depth + 1)}," for item in value) + f"\n{outer}]"
    return repr(value)


def render_python(spec: dict[str, Any]) -> str:
    return "\n".join(
        [
            f'"""The chart specification, generated by tools/gen_charts.py from {SOURCE}: do not edit."""',
            "",
            "from __future__ import annotations",
            "",
            "import re",
            "from typing import Any, Final",
            "",
            "#: kinds (display order), chart rules (first match wins), curve and marker styles",
            f"CHART_SPEC: Final[dict[str, Any]] = {_python_literal(spec, 0)}",
            "",
            "#: each rule's pattern, then the sparse series', as JavaScript's RegExp with the `s` flag reads it",
            "#: (`.` matches line terminators, `$` only the end: `\\Z`), so every name lands alike in both languages",
            "CHART_PATTERNS: Final[tuple[re.Pattern[str], ...]] = (",
            *(f"    re.compile({python_pattern(pattern).pattern!r}, re.DOTALL)," for pattern in _patterns(spec)),
            ")",
            "",
        ]
    )


def render_typescript(spec: dict[str, Any]) -> str:
    return "\n".join(
        [
            f"// Generated by tools/gen_charts.py from {SOURCE}: do not edit.",
            "// Regenerate with `make generate`.",
            "",
            "/** A group of charts, in display order. */",
            "export interface ChartKind { kind: string; title: string; collapsed: boolean }",
            "/** A chart: the series whose names match `match` (the first rule that matches wins); `$1` in the title is the first group. */",
            "export interface ChartRule { kind: string; title: string; match: string; smoothing: boolean; log_scale: boolean }",
            "/** How a marker kind is drawn, and the event it comes from; `label_colours` colour it by its label. */",
            "export interface MarkerStyle {",
            "  kind: string;",
            "  event: string;",
            "  colour: string;",
            "  width: number;",
            "  dash: number[];",
            "  label_colours?: Record<string, string>;",
            "}",
            "export interface ChartSpec {",
            "  kinds: ChartKind[];",
            "  charts: ChartRule[];",
            "  series: { colours: string[]; width: number; sparse: { match: string; dash: number[] } };",
            "  markers: MarkerStyle[];",
            "}",
            "",
            "/** Kinds (display order), chart rules (first match wins), curve and marker styles. */",
            f"export const CHART_SPEC: ChartSpec = {json.dumps(spec, indent=2, ensure_ascii=False)};",
            "",
            "/** Each rule's pattern, then the sparse series', with the `s` flag: `.` matches line terminators too, as in Python. */",
            "export const CHART_PATTERNS: readonly RegExp[] = [",
            *(f'  new RegExp({json.dumps(pattern)}, "s"),' for pattern in _patterns(spec)),
            "];",
            "",
        ]
    )


def generate(out_root: Path) -> None:
    spec = load()
    for rel, text in ((PYTHON_MODULE, render_python(spec)), (TYPESCRIPT_MODULE, render_typescript(spec))):
        target = out_root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    generate(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT)
