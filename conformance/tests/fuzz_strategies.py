"""Hypothesis strategies the fuzz tests share: writer scenarios and stream mutations."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

PHASES = ("model_load", "train", "evaluate", "save")
NUMBERS = st.one_of(
    st.floats(-1e6, 1e6, allow_nan=False), st.integers(-1000, 1000), st.sampled_from(["NaN", "Infinity", "-Infinity"])
)
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30)


RUN_IDS = st.from_regex(r"\A[a-z][a-z0-9-]{0,12}\Z")
#: how a stop reaches a run (`stop.requested.source`, its `signal`) and the `run.finished.reason` it ends with
STOP_SOURCES = st.sampled_from(
    [
        ("api", None, "api"),
        ("control_file", None, "control_file"),
        ("signal", "SIGTERM", "sigterm"),
        ("signal", "SIGINT", "sigint"),
        ("signal", "SIGBREAK", "sigbreak"),
    ]
)


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    """A random but well-formed trainer: one run, steps that go forward, a proper ending;
    about half the time a second run appended to the same stream resumes the first
    (`run.started.resumed_from`), as a restarted trainer does."""
    actions, resume_point = _run(draw, draw(RUN_IDS))
    if draw(st.booleans()):
        second, _ = _run(draw, draw(RUN_IDS.filter(lambda run_id: run_id != actions[0]["run_id"])), resume_point)
        actions += second
    return {"start_time": "2026-11-29T10:00:00Z", "step_interval_s": draw(st.sampled_from([0, 1])), "actions": actions}


def _run(
    draw: st.DrawFn, run_id: str, resumed_from: dict[str, Any] | None = None
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One run's actions, and where a run resuming it starts: its id, last checkpoint and step."""
    total = draw(st.one_of(st.none(), st.integers(1, 40)))
    start: dict[str, Any] = {"do": "start", "run_id": run_id, "total_steps": total}
    if resumed_from is not None:
        start["resumed_from"] = resumed_from
    if draw(st.booleans()):
        start["heartbeat_interval_s"] = draw(st.sampled_from([0.5, 5, 30]))
    if draw(st.booleans()):
        start["total_trials"] = draw(st.integers(1, 20))
    actions, step, trial = [start], 0, 0
    resume_point: dict[str, Any] = {"run_id": run_id, "checkpoint": None, "step": None}
    stop_reason: str | None = None  # the `run.finished.reason` of the last stop asked for
    for _ in range(draw(st.integers(0, 30))):
        kind = draw(
            st.sampled_from(
                [
                    "advance",
                    "advance",
                    "phase_start",
                    "phase_end",
                    "step",
                    "step",
                    "step",
                    "eval",
                    "checkpoint",
                    "oom_restart",
                    "trial",
                    "trial_with_steps",
                    "counted_phase",
                    "rollback",
                    "request_stop",
                    "stop_for",
                    "heartbeat",
                    "extra",
                ]
            )
        )
        if kind == "advance":
            actions.append({"do": "advance", "seconds": draw(st.sampled_from([0, 0.001, 0.3, 1, 7.5]))})
        elif kind in ("phase_start", "phase_end"):
            actions.append({"do": kind, "phase": draw(st.sampled_from(PHASES))})
        elif kind == "step" and (total is None or step < total):
            step += 1 if total is not None else draw(st.integers(1, 5))
            actions.append(
                {
                    "do": "step",
                    "step": step,
                    "loss": draw(NUMBERS),
                    "learning_rate": draw(st.sampled_from([0.001, "NaN", 2e-5])),
                }
            )
        elif kind == "eval":
            actions.append(
                {"do": "eval", "step": step, "metrics": draw(st.dictionaries(TEXT.filter(bool), NUMBERS, max_size=3))}
            )
        elif kind == "checkpoint":
            actions.append({"do": "checkpoint", "step": step, "path": f"checkpoints/checkpoint-{step}"})
            resume_point.update(checkpoint=f"checkpoints/checkpoint-{step}", step=step)
        elif kind == "oom_restart":
            actions.append({"do": "oom_restart", "step": 0, "batch_size_from": 16, "batch_size_to": 8})
            step = 0
        elif kind == "trial":
            trial += 1
            actions.append({"do": "trial_start", "trial": trial, "params": {"lr": draw(NUMBERS), "name": draw(TEXT)}})
            actions.append(
                {"do": "trial_end", "trial": trial, "status": draw(st.sampled_from(["succeeded", "failed", "pruned"]))}
            )
        elif kind == "trial_with_steps":
            trial += 1
            actions += _trial_with_steps(draw, trial)
        elif kind == "counted_phase":
            actions += _counted_phase(draw)
        elif kind == "rollback" and step > 0:
            back = draw(st.integers(0, step))
            actions.append({"do": "rollback", "previous_step": step, "step": back, "reason": draw(st.none() | TEXT)})
            step = back
        elif kind == "stop_for":
            actions.append({"do": "request_stop", "criterion": draw(TEXT.filter(bool))})
        elif kind == "request_stop":  # `trainwire stop` (control file), a signal, the API
            source, signal, stop_reason = draw(STOP_SOURCES)
            stop = {"do": "request_stop", "source": source, "reason": draw(st.one_of(st.none(), TEXT))}
            actions.append({**stop, **({"signal": signal} if signal else {})})
        elif kind == "heartbeat":
            actions.append({"do": "heartbeat"})
        elif kind == "extra":
            actions.append(
                {
                    "do": "extra",
                    "event": "vendor.thing_happened",
                    "fields": {"x_text": draw(TEXT), "x_n": draw(NUMBERS)},
                }
            )
    ending = draw(st.sampled_from(["succeeded", "interrupted", "reverted", "awaiting_approval", "fail"]))
    if ending == "fail":
        actions.append(
            {
                "do": "fail",
                "error_type": "RuntimeError",
                "message": draw(st.text(max_size=300).filter(lambda t: "\x00" not in t)),
            }
        )
    else:
        own_code = {"exit_code": draw(st.integers(0, 255))} if draw(st.booleans()) else {}
        reason = {"reason": stop_reason or draw(STOP_SOURCES)[2]} if ending == "interrupted" else {}
        actions.append({"do": "finish", "status": ending, **reason, **own_code})
    return actions, resume_point


def _trial_with_steps(draw: st.DrawFn, trial: int) -> list[dict[str, Any]]:
    """A trial (contract 1.1) whose steps start again at 1, maybe restarted inside."""
    actions: list[dict[str, Any]] = [
        {"do": "trial_start", "trial": trial, "params": {"lr": draw(NUMBERS)}, "baseline": draw(st.booleans())}
    ]
    step = 0
    for _ in range(draw(st.integers(0, 6))):
        if draw(st.integers(0, 5)) == 0:
            actions.append({"do": "oom_restart", "step": 0, "trial": trial})
            step = 0
        step += 1
        actions += [
            {"do": "advance", "seconds": 0.5},
            {"do": "step", "step": step, "loss": draw(NUMBERS), "trial": trial},
        ]
    status = draw(st.sampled_from(["succeeded", "failed", "pruned"]))
    accepted = {"accepted": draw(st.booleans())} if draw(st.booleans()) else {}
    return [*actions, {"do": "trial_end", "trial": trial, "status": status, **accepted}]


def _counted_phase(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A phase (contract 1.1) with a plan of items, maybe a cycle, counted past its plan or not."""
    plan = {
        "total": draw(st.none() | st.integers(0, 5000)),
        "unit": draw(st.none() | st.sampled_from(["items", "batches"])),
    }
    if draw(st.booleans()):
        plan.update(cycle=draw(st.integers(1, 5)), total_cycles=draw(st.none() | st.integers(1, 5)))
    counts = [
        action
        for _ in range(draw(st.integers(0, 6)))
        for action in ({"do": "advance", "seconds": 0.3}, {"do": "phase_count", "n": draw(st.integers(0, 2000))})
    ]
    given_plan = {name: value for name, value in plan.items() if value is not None}
    return [{"do": "phase_start", "phase": "evaluate", **given_plan}, *counts, {"do": "phase_end", "phase": "evaluate"}]


# Hazards of the reader rules (docs/reader-rules.md), mixed into valid streams.

BOM = b"\xef\xbb\xbf"
#: JSON whitespace (space, tab, `\r`) and what is not (`\v`, `\f`, no-break space)
ODD_WHITESPACE = [b" ", b"\t", b"\r", b"\x0b", b"\x0c", "\u00a0".encode()]
#: literals that overflow a double, as exponents and as 309-digit integers; 10^308 does not
BIG_NUMBERS = [b"1e400", b"-1e400", b"1E400", b"2e308", b"2" + b"0" * 308, b"-" + b"9" * 309, b"1" + b"0" * 308]
#: where an overflowing literal goes: a declared number, a metric, `config`, an unknown field
OVERFLOW_PLACES = ["loss", "learning_rate", "step", "seq", "metrics", "config", "x_unknown"]
#: depths (the line's object is level 1) on both sides of the 128-level limit
DEPTHS = st.sampled_from([2, 127, 128, 129, 130, 300])
MULTIBYTE = st.text(st.sampled_from("é中🚀\u00a0\u2028ß"), min_size=1, max_size=4)
_PLACEHOLDER = "\x00raw\x00"


def _compact(value: Any) -> bytes:
    """JSON as the writer writes it (no spaces, UTF-8 text)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def _with_raw(line: dict[str, Any], raw: bytes) -> bytes:
    """The line as JSON, with the placeholder string replaced by `raw` bytes (any literal)."""
    return _compact(line).replace(_compact(_PLACEHOLDER), raw)


def _nested(draw: st.DrawFn, levels: int) -> bytes:
    """A value nesting `levels` deep, objects and arrays mixed."""
    opening = draw(st.lists(st.sampled_from([b"[", b'{"k":']), min_size=levels, max_size=levels))
    closing = [b"]" if part == b"[" else b"}" for part in reversed(opening)]
    return b"".join(opening) + draw(st.sampled_from([b"1", b"null", b'"x"'])) + b"".join(closing)


def _object_or_none(raw: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


@st.composite
def hazardous_line(draw: st.DrawFn, raw: bytes) -> bytes:
    """One line with a hazard of the reader rules: odd whitespace, an overflowing number,
    deep nesting, a duplicate key, multi-byte text or a BOM inside it."""
    kind = draw(st.sampled_from(["whitespace", "overflow", "deep", "duplicate_key", "multibyte", "bom"]))
    line = _object_or_none(raw)
    if kind == "bom" or not line:
        at = draw(st.integers(0, len(raw)))
        return raw[:at] + BOM + raw[at:]
    if kind == "whitespace":
        text = _compact(line)
        spaces = b"".join(draw(st.lists(st.sampled_from(ODD_WHITESPACE), min_size=1, max_size=3)))
        cuts = [index + 1 for index, byte in enumerate(text) if byte in b",:{"] + [0, len(text)]
        at = draw(st.sampled_from(cuts))
        return text[:at] + spaces + text[at:]
    if kind == "overflow":
        place = draw(st.sampled_from(OVERFLOW_PLACES))
        literal = draw(st.sampled_from(BIG_NUMBERS))
        if place in ("metrics", "config"):
            line[place] = {**(line.get(place) if isinstance(line.get(place), dict) else {}), "x": _PLACEHOLDER}
        else:
            line[place] = _PLACEHOLDER
        return _with_raw(line, literal)
    if kind == "deep":
        levels = draw(DEPTHS) - 1
        line[draw(st.sampled_from(["x_deep", "config", "metrics"]))] = _PLACEHOLDER
        return _with_raw(line, _nested(draw, levels))
    if kind == "duplicate_key":
        key = draw(st.sampled_from(sorted(line)))
        value = draw(st.sampled_from([line[key], None, "x", 1, [], _PLACEHOLDER]))
        duplicate = _with_raw({key: value}, b"1e400")[1:-1]
        text = _compact(line)
        return text[:-1] + b"," + duplicate + b"}" if draw(st.booleans()) else b"{" + duplicate + b"," + text[1:]
    line[draw(st.sampled_from(["x_text", "run_id", "reason"]))] = draw(MULTIBYTE)
    return _compact(line)


@st.composite
def odd_whitespace_line(draw: st.DrawFn) -> bytes:
    """A line of only whitespace: blank (spaces, tabs, a final `\\r`) or not (`\\v`, `\\f`, no-break space)."""
    return b"".join(draw(st.lists(st.sampled_from(ODD_WHITESPACE), min_size=1, max_size=4)))


@st.composite
def hazardous(draw: st.DrawFn, data: bytes) -> bytes:
    """`data` with about half its complete lines made hazardous, lines of odd whitespace
    between some, and sometimes a BOM first."""
    *lines, tail = data.split(b"\n")
    out = [BOM] if draw(st.booleans()) else [b""]
    for line in lines:
        if draw(st.integers(0, 4)) == 0:
            out.append(draw(odd_whitespace_line()) + b"\n")
        out.append((draw(hazardous_line(line)) if draw(st.booleans()) else line) + b"\n")
    return b"".join(out) + tail


GARBAGE = st.one_of(
    st.sampled_from(
        [
            b"",
            b"   ",
            b"not json",
            b"{",
            b"[]",
            b"null",
            b'{"schema_version":2,"seq":1}',
            b"\xff\xfe",
            b"\xef\xbb\xbf{}",
            b"NaN",
            b"{}\r",
        ]
    ),
    st.binary(max_size=40).filter(lambda raw: b"\n" not in raw),
)


@st.composite
def mutated(draw: st.DrawFn, data: bytes, *, long_line_bytes: int | None = None, hazards: bool = False) -> bytes:
    """`data` after a few random truncations, insertions, byte flips, duplicated and dropped lines;
    with `hazards`, also lines made hazardous (`hazardous_line`), BOMs and lines of odd whitespace."""
    kinds = ["truncate", "garbage", "flip", "duplicate", "drop", "swap"] + (["long"] if long_line_bytes else [])
    if hazards:
        kinds += ["hazard", "hazard", "hazard", "whitespace_line", "bom_at_start"]
    for _ in range(draw(st.integers(1, 4))):
        lines = data.split(b"\n")
        kind = draw(st.sampled_from(kinds))
        at = draw(st.integers(0, max(len(lines) - 2, 0)))
        if kind == "truncate" and data:
            data = data[: draw(st.integers(0, len(data) - 1))]
        elif kind == "garbage":
            data = b"\n".join([*lines[:at], draw(GARBAGE), *lines[at:]])
        elif kind == "flip" and data:
            index = draw(st.integers(0, len(data) - 1))
            data = data[:index] + bytes([data[index] ^ draw(st.integers(1, 255))]) + data[index + 1 :]
        elif kind == "duplicate" and lines:
            data = b"\n".join([*lines[: at + 1], lines[at], *lines[at + 1 :]])
        elif kind == "drop" and len(lines) > 1:
            data = b"\n".join([*lines[:at], *lines[at + 1 :]])
        elif kind == "swap" and len(lines) > 2:
            lines[at], lines[at + 1] = lines[at + 1], lines[at]
            data = b"\n".join(lines)
        elif kind == "long" and long_line_bytes:
            data = b"\n".join([*lines[:at], b'{"x":"' + b"y" * long_line_bytes + b'"}', *lines[at:]])
        elif kind == "hazard" and lines:
            lines[at] = draw(hazardous_line(lines[at]))
            data = b"\n".join(lines)
        elif kind == "whitespace_line":
            data = b"\n".join([*lines[:at], draw(odd_whitespace_line()), *lines[at:]])
        elif kind == "bom_at_start":
            data = BOM + data
    return data


@st.composite
def splits(draw: st.DrawFn, data: bytes) -> list[bytes]:
    """`data` cut at a few random places (empty chunks included), some inside multi-byte
    UTF-8 characters (a BOM's included) when `data` has any."""
    cuts = draw(st.lists(st.integers(0, len(data)), max_size=12))
    inside_characters = [index for index, byte in enumerate(data) if 0x80 <= byte <= 0xBF]
    if inside_characters:
        cuts += draw(st.lists(st.sampled_from(inside_characters), max_size=6))
    cuts.sort()
    edges = [0, *cuts, len(data)]
    return [data[start:end] for start, end in zip(edges, edges[1:], strict=False)]
