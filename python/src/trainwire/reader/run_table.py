"""A run as a small HTML table: what Jupyter shows for a `RunState` and `notebook.run_html` returns."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from trainwire.contract.clock import now_us
from trainwire.contract.humanize import format_duration

if TYPE_CHECKING:
    from trainwire.reader.state import RunState

__all__ = ["run_table_html"]


def run_table_html(run: RunState, *, stale_after_s: float | None = None) -> str:
    """The run as a small HTML table (Jupyter shows a `RunState` so): status now, step, loss, ..."""
    rows = [("run", run.run_id), ("status", run.status_at(now_us(), stale_after_s))]
    if run.phase:
        rows.append(("phase", run.phase))
    if run.step is not None:
        total = f"/{run.total_steps}" if run.total_steps is not None else ""
        progress = f" ({run.progress:.0%})" if run.progress is not None else ""
        rows.append(("step", f"{run.step}{total}{progress}"))
    if run.loss is not None:
        rows.append(("loss", f"{run.loss:.4g}"))
    if run.learning_rate is not None:
        rows.append(("learning rate", f"{run.learning_rate:.2e}"))
    if run.eta_s is not None and run.finished is None:
        rows.append(("eta", format_duration(run.eta_s)))
    if run.last_eval is not None:
        metrics = ", ".join(
            f"{name} {value:.4g}" for name, value in run.last_eval["metrics"].items() if value is not None
        )
        rows.append((f"eval ({run.last_eval['split']}) at step {run.last_eval['step']}", metrics))
    if run.last_checkpoint is not None:
        rows.append(("checkpoint", f"{run.last_checkpoint['path']} at step {run.last_checkpoint['step']}"))
    if run.restarts:
        rows.append(("restarts", str(len(run.restarts))))
    body = "".join(
        f"<tr><th style='text-align:left'>{html.escape(name)}</th><td style='text-align:left'>{html.escape(value)}</td></tr>"
        for name, value in rows
    )
    return f"<table class='trainwire-run'>{body}</table>"
