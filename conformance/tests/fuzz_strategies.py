"""Hypothesis strategies the fuzz tests share: writer scenarios and stream mutations."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

PHASES = ("model_load", "train", "evaluate", "save")
NUMBERS = st.one_of(st.floats(-1e6, 1e6, allow_nan=False), st.integers(-1000, 1000), st.sampled_from(["NaN", "Infinity", "-Infinity"]))
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30)


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    """A random but well-formed trainer: one run, steps that go forward, a proper ending."""
    total = draw(st.one_of(st.none(), st.integers(1, 40)))
    start: dict[str, Any] = {"do": "start", "run_id": draw(st.from_regex(r"\A[a-z][a-z0-9-]{0,12}\Z")), "total_steps": total}
    if draw(st.booleans()):
        start["heartbeat_interval_s"] = draw(st.sampled_from([0.5, 5, 30]))
    actions, step, trial = [start], 0, 0
    for _ in range(draw(st.integers(0, 30))):
        kind = draw(st.sampled_from(["advance", "advance", "phase_start", "phase_end", "step", "step", "step", "eval", "checkpoint",
                                     "oom_restart", "trial", "request_stop", "heartbeat", "extra"]))
        if kind == "advance":
            actions.append({"do": "advance", "seconds": draw(st.sampled_from([0, 0.001, 0.3, 1, 7.5]))})
        elif kind in ("phase_start", "phase_end"):
            actions.append({"do": kind, "phase": draw(st.sampled_from(PHASES))})
        elif kind == "step" and (total is None or step < total):
            step += 1 if total is not None else draw(st.integers(1, 5))
            actions.append({"do": "step", "step": step, "loss": draw(NUMBERS), "learning_rate": draw(st.sampled_from([0.001, "NaN", 2e-5]))})
        elif kind == "eval":
            actions.append({"do": "eval", "step": step, "metrics": draw(st.dictionaries(TEXT.filter(bool), NUMBERS, max_size=3))})
        elif kind == "checkpoint":
            actions.append({"do": "checkpoint", "step": step, "path": f"checkpoints/checkpoint-{step}"})
        elif kind == "oom_restart":
            actions.append({"do": "oom_restart", "step": 0, "batch_size_from": 16, "batch_size_to": 8})
            step = 0
        elif kind == "trial":
            trial += 1
            actions.append({"do": "trial_start", "trial": trial, "params": {"lr": draw(NUMBERS), "name": draw(TEXT)}})
            actions.append({"do": "trial_end", "trial": trial, "status": draw(st.sampled_from(["succeeded", "failed", "pruned"]))})
        elif kind == "request_stop":
            actions.append({"do": "request_stop", "source": "api", "reason": draw(st.one_of(st.none(), TEXT))})
        elif kind == "heartbeat":
            actions.append({"do": "heartbeat"})
        elif kind == "extra":
            actions.append({"do": "extra", "event": "vendor.thing_happened", "fields": {"x_text": draw(TEXT), "x_n": draw(NUMBERS)}})
    ending = draw(st.sampled_from(["succeeded", "interrupted", "reverted", "awaiting_approval", "fail"]))
    if ending == "fail":
        actions.append({"do": "fail", "error_type": "RuntimeError", "message": draw(st.text(max_size=300).filter(lambda t: "\x00" not in t))})
    else:
        actions.append({"do": "finish", "status": ending, **({"reason": "api"} if ending == "interrupted" else {})})
    return {"start_time": "2026-11-29T10:00:00Z", "step_interval_s": draw(st.sampled_from([0, 1])), "actions": actions}


GARBAGE = st.one_of(
    st.sampled_from([b"", b"   ", b"not json", b"{", b"[]", b"null", b'{"schema_version":2,"seq":1}', b"\xff\xfe", b"\xef\xbb\xbf{}", b"NaN", b"{}\r"]),
    st.binary(max_size=40).filter(lambda raw: b"\n" not in raw),
)


@st.composite
def mutated(draw: st.DrawFn, data: bytes, *, long_line_bytes: int | None = None) -> bytes:
    """`data` after a few random truncations, insertions, byte flips, duplicated and dropped lines."""
    for _ in range(draw(st.integers(1, 4))):
        lines = data.split(b"\n")
        kind = draw(st.sampled_from(["truncate", "garbage", "flip", "duplicate", "drop", "swap"] + (["long"] if long_line_bytes else [])))
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
    return data


@st.composite
def splits(draw: st.DrawFn, data: bytes) -> list[bytes]:
    """`data` cut at a few random places (empty chunks included)."""
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=12)))
    edges = [0, *cuts, len(data)]
    return [data[start:end] for start, end in zip(edges, edges[1:])]
