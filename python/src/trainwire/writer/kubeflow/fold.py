"""The runs offered to a reporter, folded as a reader folds them (`lines.state_fold`), and the
one it reports: the last run started (a stream may hold several; a TrainJob shows one).
Kept by the reporter's thread (the run's own events) or by the export (a stream's)."""

from __future__ import annotations

from typing import Any

from trainwire.lines.state_fold import RunStateFold, fold_kept_step
from trainwire.writer.kubeflow.progress import RunProgress, progress_of

__all__ = ["PROMPT_EVENTS", "ProgressFold"]

#: events posted without waiting for the interval: the start, evaluations, trials' ends, the end
PROMPT_EVENTS = frozenset({"run.started", "eval.completed", "trial.ended", "run.finished"})


class ProgressFold:
    """`add(event)` folds one event; `changed` and `prompt` say what a post has to tell."""

    def __init__(self, saved: dict[str, Any] | None = None) -> None:
        self._fold = RunStateFold(resume=saved["reader"] if saved else None)
        self.run_id: str | None = saved.get("run_id") if saved else None
        self._total_epochs: dict[str, Any] = dict(saved.get("total_epochs", {})) if saved else {}
        #: the reported run changed since the last `taken()`; among the changes, a prompt event
        self.changed = False
        self.prompt = False
        #: a start or an end came: posted at once, whatever the pace
        self.now = False

    def add(self, event: dict[str, Any]) -> None:
        name = event.get("event")
        if name == "run.started":
            self.run_id = event.get("run_id")
            self._total_epochs[str(self.run_id)] = event.get("total_epochs")
        if "seq" in event:
            applied = self._fold.apply(0, event)
        else:  # a step the stream's throttle left out (the export's, from the run's journal)
            run = self._fold.runs.get(event.get("run_id", ""))
            applied = run is not None
            if run is not None:
                fold_kept_step(run, event)
        if applied and event.get("run_id") == self.run_id:
            self.changed = True
            self.prompt = self.prompt or name in PROMPT_EVENTS
            self.now = self.now or name in ("run.started", "run.finished")
        # the steps a reporter skips are gaps to the fold: nothing a TrainJob shows, so not kept
        self._fold.diagnostics.clear()
        for run in self._fold.runs.values():
            run.seq_gaps.clear()

    def progress(self) -> RunProgress | None:
        """The reported run's progress now, marked as told; None before any run started."""
        self.changed = self.prompt = self.now = False
        run = self._fold.runs.get(str(self.run_id))
        if run is None:
            return None
        return progress_of(run.to_dict(), total_epochs=self._total_epochs.get(run.run_id))

    def state(self) -> dict[str, Any]:
        """What a later fold goes on from (`ProgressFold(saved=...)`)."""
        reader = {
            "runs": [run.to_dict() for run in self._fold.runs.values()],
            "unknown_events": self._fold.unknown_events,
            "diagnostics": [],
        }
        return {"reader": reader, "run_id": self.run_id, "total_epochs": dict(self._total_epochs)}
