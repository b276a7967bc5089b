"""A run as a small HTML table: what Jupyter shows for a `RunState` and `notebook.run_html` returns."""

from __future__ import annotations

import html
from typing import Any, Protocol

from trainwire.contract.clock import now_us
from trainwire.contract.humanize import format_duration

__all__ = ["run_table_html"]


class _Run(Protocol):
    """What the table reads of a `RunState` (the state module imports this one)."""

    def to_dict(self, now_us: int | None = None, stale_after_s: float | None = None) -> dict[str, Any]: ...


def run_table_html(run: _Run, *, stale_after_s: float | None = None) -> str:
    """The run as a small HTML table (Jupyter shows a `RunState` so): status now, step, loss, ..."""
    state = run.to_dict(now_us(), stale_after_s)
    rows = [("run", state["run_id"]), ("status", state["status"])]
    if state["phase"]:
        rows.append(("phase", state["phase"]))
    counted, cycle = state["phase_progress"], state["cycle"]
    if counted is not None:
        total = f"/{counted['total']:,}" if counted["total"] is not None else ""
        rows.append((f"{counted['phase']} {counted['unit'] or 'items'}", f"{counted['done']:,}{total}"))
    if cycle is not None:
        of = f" of {cycle['total_cycles']}" if cycle["total_cycles"] is not None else ""
        rows.append((f"{cycle['phase']} cycle", f"{cycle['cycle']}{of}"))
    trials = state["trials"]
    if trials["list"]:
        rows.append(("trials", f"{len(trials['list'])}" + (f"/{trials['total']}" if trials["total"] else "")))
    if state["step"] is not None:
        total = f"/{state['total_steps']}" if state["total_steps"] is not None else ""
        progress = f" ({state['progress']:.0%})" if state["progress"] is not None else ""
        rows.append(("step", f"{state['step']}{total}{progress}"))
    if state["loss"] is not None:
        rows.append(("loss", f"{state['loss']:.4g}"))
    if state["learning_rate"] is not None:
        rows.append(("learning rate", f"{state['learning_rate']:.2e}"))
    if state["eta_s"] is not None and state["finished"] is None:
        rows.append(("eta", format_duration(state["eta_s"])))
    last_eval, checkpoint = state["last_eval"], state["last_checkpoint"]
    if last_eval is not None:
        metrics = ", ".join(f"{name} {value:.4g}" for name, value in last_eval["metrics"].items() if value is not None)
        rows.append((f"eval ({last_eval['split']}) at step {last_eval['step']}", metrics))
    if checkpoint is not None:
        rows.append(("checkpoint", f"{checkpoint['path']} at step {checkpoint['step']}"))
    if state["restarts"]:
        rows.append(("restarts", str(len(state["restarts"]))))
    body = "".join(
        f"<tr><th style='text-align:left'>{html.escape(name)}</th><td style='text-align:left'>{html.escape(value)}</td></tr>"
        for name, value in rows
    )
    return f"<table class='trainwire-run'>{body}</table>"
