"""The verdict of a run (schemas/verdict): one account of how a run stands or ended, from its
summary, the time it is judged at and what its host can prove of its process.

Every surface renders this and derives none of its own: `state`, `tail`, `runs`, `diff`,
`plot`, the exports and (by `verdictOf`, the same rules) the dashboard. A surface without a
clock passes `now_us=None`: its verdict says `judged_at: null` instead of guessing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from trainwire.contract.clock import format_ts, parse_timestamp_us
from trainwire.contract.humanize import format_duration
from trainwire.contract.liveness import status_at
from trainwire.contract.printable import printable
from trainwire.contract.process_proof import GONE, UNKNOWN
from trainwire.contract.status import EXIT_CODES
from trainwire.lines.exact_checks import integral_floats_to_int
from trainwire.lines.summary import is_lower_better

__all__ = [
    "VERDICT_VERSION",
    "completeness_text",
    "is_over",
    "params_text",
    "status_text",
    "verdict_of",
    "verdict_text",
]

VERDICT_VERSION = 1
#: statuses of a run that will write nothing more
_OVER = ("succeeded", "failed", "interrupted", "reverted", "awaiting_approval", "stale")


def verdict_of(
    summary: Mapping[str, Any],
    *,
    now_us: int | None,
    stale_after_s: float | None = None,
    liveness: str = UNKNOWN,
) -> dict[str, Any]:
    """The verdict of the run `summary` (schemas/summary) describes, judged at `now_us` (None:
    no clock), given the `liveness` its host proves (`contract.process_proof.liveness_of`)."""
    finished = summary["status"] != "running"
    last_line_at = summary.get("last_line_at")
    if finished:
        status, liveness = summary["status"], GONE
    elif liveness == GONE:
        status = "stale"  # its own host proved the process dead: no need to wait out the silence
    else:
        status = status_at("running", last_line_at, summary.get("heartbeat_interval_s"), now_us, stale_after_s)
    started_at = summary.get("started_at")
    if finished:
        ended_at, ended_by = summary.get("finished_at"), "run.finished"
    elif status == "stale":
        ended_at, ended_by = last_line_at, "last_line"
    else:
        ended_at, ended_by = None, None
    exit_code = summary.get("exit_code")
    if finished and exit_code is None:
        exit_code = EXIT_CODES.get(status)
    return {
        "verdict_version": VERDICT_VERSION,
        "run_id": summary["run_id"],
        "status": status,
        "liveness": liveness,
        "judged_at": None if now_us is None else format_ts(now_us / 1e6),
        "exit_code": exit_code if finished else None,
        "reason": summary.get("reason"),
        "step": summary.get("step"),
        "started_at": started_at,
        "ended_at": ended_at,
        "ended_by": ended_by,
        "duration_s": _duration(summary, started_at, ended_at, last_line_at, now_us),
        "best": _best(summary),
        "checkpoint": _checkpoint(summary),
        "params": _params(summary),
        "completeness": _completeness(summary.get("completeness")),
    }


def is_over(verdict: Mapping[str, Any]) -> bool:
    """Whether the run will write nothing more: finished, or stale (silent past its limit, or
    its process proven gone). What ends every `--follow`."""
    return verdict["status"] in _OVER


def _duration(
    summary: Mapping[str, Any], started_at: Any, ended_at: Any, last_line_at: Any, now_us: int | None
) -> float | None:
    """`run.finished.duration_s`; else to the end (a dead run's never grows), to now while
    running, or to the last line without a clock."""
    if summary["status"] != "running" and isinstance(summary.get("duration_s"), (int, float)):
        return float(summary["duration_s"])
    if not isinstance(started_at, str):
        return None
    until = ended_at if isinstance(ended_at, str) else None
    if until is None and now_us is None:
        until = last_line_at if isinstance(last_line_at, str) else None
    end_us = parse_timestamp_us(until) if until is not None else now_us
    if end_us is None:
        return None
    return max(0.0, (end_us - parse_timestamp_us(started_at)) / 1e6)


def _best(summary: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    objective = summary.get("objective") or {}
    found: dict[str, dict[str, Any]] = {}
    for name, best in sorted((summary.get("best") or {}).items()):
        if objective.get("name") == name and objective.get("goal") in ("min", "max"):
            goal = objective["goal"]
        else:
            goal = "min" if is_lower_better(name) else "max"
        trial = best.get("trial")
        found[name] = {"value": best["value"], "step": best.get("step"), "trial": trial, "goal": goal}
    return found


def _checkpoint(summary: Mapping[str, Any]) -> dict[str, str] | None:
    path = summary.get("checkpoint")
    if not isinstance(path, str):
        return None
    source = summary.get("checkpoint_from")
    if source not in ("run.finished", "checkpoint.saved"):
        source = "checkpoint.saved"  # a summary from before `checkpoint_from`: not known to be the final one
    return {"path": path, "source": source}


def _params(summary: Mapping[str, Any]) -> dict[str, Any] | None:
    best = (summary.get("trials") or {}).get("best") or {}
    params = best.get("params")
    # integer-valued params are integers: the rule JavaScript's numbers follow too
    return integral_floats_to_int(dict(params)) if isinstance(params, Mapping) else None


def _completeness(completeness: Any) -> dict[str, Any] | None:
    if not isinstance(completeness, Mapping):
        return None
    lost = completeness.get("stream_lines_lost") or 0, completeness.get("kept_steps_lost") or 0
    return dict(completeness) if any(lost) else None


def params_text(params: Mapping[str, Any] | None, limit: int = 4) -> str:
    """A trial's params by name, integers as integers: `layers=2, lr=0.01`; the first `limit`."""
    shown = sorted(integral_floats_to_int(dict(params or {})).items())[:limit]
    return ", ".join(f"{printable(name)}={_value_text(value)}" for name, value in shown)


def _value_text(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return str(value).lower() if value is not None else "null"
    if isinstance(value, float):
        return f"{value:.6g}"
    return printable(str(value))


def completeness_text(completeness: Mapping[str, Any] | None) -> str:
    """`stream incomplete: 6 of 6 lines lost`, `59,998 of 60,000 steps`, or '' when complete."""
    if not completeness:
        return ""
    parts = []
    lines, lost = completeness.get("stream_lines") or 0, completeness.get("stream_lines_lost") or 0
    if lost:
        parts.append(f"stream incomplete: {lost:,} of {lines:,} lines lost")
    steps, kept_lost = completeness.get("steps_logged") or 0, completeness.get("kept_steps_lost") or 0
    if kept_lost:
        parts.append(f"{max(0, steps - kept_lost):,} of {steps:,} steps")
    return ", ".join(parts)


def verdict_text(verdict: Mapping[str, Any], total_steps: int | None = None) -> str:
    """The verdict in one line: `stale (process gone): step 30/300, 5.2s, best loss 0.25
    (trial 5), checkpoint ckpt/30 (last saved), layers=2`: what every text surface prints."""
    parts = []
    if verdict["step"] is not None:
        parts.append(f"step {verdict['step']}" + (f"/{total_steps}" if total_steps is not None else ""))
    if verdict["duration_s"] is not None:
        parts.append(format_duration(verdict["duration_s"]))
    for name, best in verdict["best"].items():
        trial = f" (trial {best['trial']})" if best["trial"] is not None else ""
        parts.append(f"best {printable(name)} {best['value']:.6g}{trial}")
    checkpoint = checkpoint_text(verdict["checkpoint"])
    if checkpoint is not None:
        parts.append(checkpoint)
    params = params_text(verdict["params"])
    if params:
        parts.append(params)
    return f"{status_text(verdict)}: " + (", ".join(parts) or "no steps")


def checkpoint_text(checkpoint: Mapping[str, Any] | None) -> str | None:
    """The checkpoint to resume from as every surface words it: `checkpoint ckpt/final`, or
    `checkpoint ckpt/30 (last saved)` when no `run.finished` named it; None for none."""
    if checkpoint is None:
        return None
    label = "" if checkpoint["source"] == "run.finished" else " (last saved)"
    return f"checkpoint {printable(checkpoint['path'])}{label}"


def status_text(verdict: Mapping[str, Any]) -> str:
    """The status as every surface words it: `stale (process gone)`, `running (as of its last
    line)` without a clock, `succeeded, stream incomplete: 6 of 6 lines lost`."""
    status = verdict["status"]
    if verdict["liveness"] == GONE and status in ("running", "stale"):
        status += " (process gone)"
    elif verdict["judged_at"] is None and status == "running":
        status += " (as of its last line)"
    incomplete = completeness_text(verdict.get("completeness"))
    return f"{status}, {incomplete}" if incomplete else status
