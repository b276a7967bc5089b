"""The run-state fold: one state per run from a stream's decoded lines (reader rules 3-5).

The run record, the fold with its checks 7-9 and its per-event effects read as the reader
rules do, section by section. Below the writer and the reader: the reader's `StreamReader`
feeds it decoded bytes, the writer's journal the lines it writes (its snapshot's `state`).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from trainwire._generated.contract import ENVELOPE_FIELDS, EVENT_NAMES, DiagnosticCode
from trainwire.contract.clock import parse_timestamp_us
from trainwire.contract.errors import StreamError
from trainwire.contract.liveness import status_at
from trainwire.contract.status import EXIT_CODES
from trainwire.lines.diagnostics import Batch, Diagnostic, DiagnosticLog, ValidatedRecord
from trainwire.lines.phases import phase_ended, phase_progress, phase_started
from trainwire.lines.run_table import run_table_html
from trainwire.lines.trials import (
    evaluation,
    new_trials,
    trial_ended,
    trial_evaluated,
    trial_progress,
    trial_started,
    trial_went_back,
)

__all__ = ["RunState", "RunStateFold", "fold_kept_step"]

_ENVELOPE_FIELDS = frozenset(ENVELOPE_FIELDS)
_EVENT_NAMES = frozenset(EVENT_NAMES)


class RunState:
    """What a reader knows about one run; `to_dict` is its reader-state form."""

    __slots__ = (
        "run_id",
        "status",
        "events",
        "last_seq",
        "last_ts",
        "seq_gaps",
        "heartbeat_interval_s",
        "phase",
        "step",
        "total_steps",
        "epoch",
        "loss",
        "learning_rate",
        "eta_s",
        "progress",
        "attempt",
        "restarts",
        "stop_requested",
        "last_eval",
        "last_checkpoint",
        "trials",
        "phase_progress",
        "cycle",
        "rollbacks",
        "stop_criterion",
        "stage",
        "finished",
    )

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.status = "running"
        self.events = 0
        self.last_seq = 0
        self.last_ts: str | None = None
        self.seq_gaps: list[list[int]] = []
        self.heartbeat_interval_s: float | None = None
        self.phase: str | None = None
        self.step: int | None = None
        self.total_steps: int | None = None
        self.epoch: float | None = None
        self.loss: float | None = None
        self.learning_rate: float | None = None
        self.eta_s: float | None = None
        self.progress: float | None = None
        self.attempt = 1
        self.restarts: list[dict[str, Any]] = []
        self.stop_requested = False
        self.last_eval: dict[str, Any] | None = None
        self.last_checkpoint: dict[str, Any] | None = None
        self.trials: dict[str, Any] = new_trials()
        self.phase_progress: dict[str, Any] | None = None
        self.cycle: dict[str, Any] | None = None
        self.rollbacks: list[dict[str, Any]] = []
        self.stop_criterion: str | None = None
        self.stage: dict[str, Any] | None = None
        self.finished: dict[str, Any] | None = None

    @property
    def exit_code(self) -> int | None:
        """The exit code `run.finished` gives (a host's own code included); None while it runs."""
        if self.finished is not None and isinstance(self.finished.get("exit_code"), int):
            return int(self.finished["exit_code"])
        return EXIT_CODES.get(self.status)

    def status_at(self, now_us: int | None, stale_after_s: float | None = None) -> str:
        """`stale` when a running run has been silent too long at `now_us` (rule 4)."""
        return status_at(self.status, self.last_ts, self.heartbeat_interval_s, now_us, stale_after_s)

    def _repr_html_(self) -> str:
        """In Jupyter: a small table of the run, a snapshot at display time."""
        return run_table_html(self)

    @classmethod
    def from_dict(cls, saved: dict[str, Any]) -> RunState:
        """A run as a saved reader state holds it (`to_dict`'s output), to go on from."""
        run = cls(saved["run_id"])
        for name in cls.__slots__:  # a state a 1.0 reader saved lacks the 1.1 fields: they keep their defaults
            setattr(run, name, copy.deepcopy(saved.get(name, getattr(run, name))))
        run.trials = {**new_trials(), **run.trials}
        if run.status == "stale":  # decided when a state is read, never kept: the run was running
            run.status = "running"
        return run

    def to_dict(self, now_us: int | None = None, stale_after_s: float | None = None) -> dict[str, Any]:
        state = copy.deepcopy({name: getattr(self, name) for name in self.__slots__})
        state["status"] = self.status_at(now_us, stale_after_s)
        return state


#: the fold's "no run yet": never written to, as `next_seq` 0 sends the next line to `_run_for`
_NO_RUN = RunState("")


def fold_kept_step(run: RunState, line: dict[str, Any]) -> None:
    """A step the stream's throttle left out (the journal's step file), logged after the run's
    last stream step: a view of where the run is takes its fields and its time. Never its
    `seq` nor a count of lines: the stream did not hold it."""
    _train_step(run, line)
    if run.last_ts is None or parse_timestamp_us(line["ts"]) > parse_timestamp_us(run.last_ts):
        run.last_ts = line["ts"]


class RunStateFold:
    """Folds `(line, event)` records into runs, with checks 7-9 of the reader rules.

    Events are the decoder's validated dicts (a typed event is taken too, as its dict).

    `diagnostics` may be a list shared with the decoder, so that both add to it in
    stream order.
    """

    def __init__(
        self,
        *,
        strict: bool = False,
        diagnostics: list[Diagnostic] | None = None,
        resume: dict[str, Any] | None = None,
    ) -> None:
        self.strict = strict
        self.diagnostics: list[Diagnostic] = [] if diagnostics is None else diagnostics
        #: runs by id, in order of first appearance
        self.runs: dict[str, RunState] = {}
        #: lines applied whose event name this reader does not know
        self.unknown_events = 0
        if resume is not None:
            # a saved reader state: its runs keep their last seq and ts, so gaps and silence are still seen
            self.runs = {saved["run_id"]: RunState.from_dict(saved) for saved in resume["runs"]}
            self.unknown_events = resume["unknown_events"]
            self.diagnostics.extend(Diagnostic(d["line"], d["code"], d["message"]) for d in resume["diagnostics"])
            if isinstance(self.diagnostics, DiagnosticLog):
                self.diagnostics.dropped += resume.get("diagnostics_dropped", 0)

    def apply(self, line: int, event: Any) -> bool:
        """Fold one decoded line; False when it is dropped (after_finished, seq_not_increasing)."""
        if type(event) is not dict:
            # deferred: the models' module builds every model; the writer's journal folds dicts only
            from trainwire.contract.event_dicts import event_dict

            event = event_dict(event)
        run = self._run_for(line, event)
        if run is None:
            return False
        run.events += 1
        run.last_seq = event["seq"]
        run.last_ts = event["ts"]
        self._effect(run, event)
        return True

    def extend(self, records: Iterable[ValidatedRecord]) -> list[dict[str, Any]]:
        """Fold records in order; return the events applied (validated dicts)."""
        return self.extend_batches((line, [event]) for line, event in records)

    def extend_batches(self, batches: Iterable[Batch]) -> list[dict[str, Any]]:
        """Fold the decoder's batches of consecutive lines in order; return the events applied."""
        applied: list[dict[str, Any]] = []
        run = _NO_RUN  # the run of the line before
        run_id = ""  # its id
        next_seq = 0  # the seq of that run's next line, which passes every check (0: none does)
        # the run's latest train.step, not yet written into it, with the steps since the last
        # write: a step's counters and record are written once for a row of steps
        step: dict[str, Any] | None = None
        steps = 0
        for first, events in batches:
            dropped: list[int] = []
            for index, event in enumerate(events):
                seq = event["seq"]
                if seq != next_seq or event["run_id"] != run_id:
                    if step is not None:
                        _steps_folded(run, step, steps)
                        step, steps = None, 0
                    found = self._run_for(first + index, event)
                    if found is None:
                        dropped.append(index)
                        run, run_id, next_seq = _NO_RUN, "", 0
                        continue
                    run, run_id = found, found.run_id
                next_seq = seq + 1
                if event["event"] == "train.step" and "stage" not in event:
                    if step is not None and step.get("trial") != event.get("trial"):
                        _steps_folded(run, step, steps)  # another trial's last step is its record's
                        steps = 0
                    # a later step of the same trial, without a stage, overwrites every field: only the last is written
                    step = event
                    steps += 1
                    continue
                if step is not None:
                    _steps_folded(run, step, steps)
                    step, steps = None, 0
                run.events += 1
                run.last_seq = seq
                run.last_ts = event["ts"]
                self._effect(run, event)
                if run.finished is not None:
                    next_seq = 0  # a later line of the run is dropped: `_run_for` says so
            if dropped:
                skipped = set(dropped)
                applied += [event for index, event in enumerate(events) if index not in skipped]
            else:
                applied += events
        if step is not None:
            _steps_folded(run, step, steps)
        return applied

    def _run_for(self, line: int, event: dict[str, Any]) -> RunState | None:
        """The run a line folds into (checks 7-9); None when the line is dropped."""
        run_id = event["run_id"]
        run = self.runs.get(run_id)
        seq = event["seq"]
        if run is not None:
            if run.finished is not None:
                self._report(
                    line, "after_finished", f"run {run_id} already finished; {event['event']} seq {seq} dropped"
                )
                return None
            if seq <= run.last_seq:
                self._report(
                    line, "seq_not_increasing", f"run {run_id}: seq {seq} after seq {run.last_seq}; line dropped"
                )
                return None
        else:
            run = self.runs[run_id] = RunState(run_id)
        if seq > run.last_seq + 1:
            run.seq_gaps.append([run.last_seq + 1, seq])
            self._report(line, "seq_gap", f"run {run_id}: expected seq {run.last_seq + 1}, got {seq}; line applied")
        return run

    def _effect(self, run: RunState, event: dict[str, Any]) -> None:
        if "stage" in event and event["stage"] is not None:
            run.stage = dict(event["stage"])
        name = event["event"]
        effect = _EFFECTS.get(name)
        if effect is not None:
            effect(run, event)
        elif name not in _EVENT_NAMES:
            self.unknown_events += 1

    def _report(self, line: int, code: DiagnosticCode, message: str) -> None:
        if self.strict:
            raise StreamError(line, code, message)
        self.diagnostics.append(Diagnostic(line, code, message))


# effects of each event (a validated dict) on its run (reader rules, section 3); an
# optional field is a key present exactly when the line sets it

Event = dict[str, Any]


def _run_started(run: RunState, event: Event) -> None:
    run.total_steps = event.get("total_steps")
    run.trials["total"] = event.get("total_trials")
    if "heartbeat_interval_s" in event:
        run.heartbeat_interval_s = event["heartbeat_interval_s"]


def _steps_folded(run: RunState, step: Event, count: int) -> None:
    """A row of `count` plain steps of one trial folded: the counters, and the last step's record."""
    run.events += count
    run.last_seq = step["seq"]
    run.last_ts = step["ts"]
    _train_step(run, step)


def _train_step(run: RunState, event: Event) -> None:
    run.step = event["step"]
    run.total_steps = event["total_steps"]
    run.epoch = event.get("epoch")
    run.loss = event.get("loss")
    run.learning_rate = event.get("learning_rate")
    run.eta_s = event.get("eta_s")
    run.progress = event.get("progress")
    if "trial" in event:
        trial_progress(run.trials, event)


def _train_epoch(run: RunState, event: Event) -> None:
    run.epoch = event["epoch"]
    run.step = event["step"]
    if "trial" in event:
        trial_progress(run.trials, event)


def _train_restarted(run: RunState, event: Event) -> None:
    run.attempt = event["attempt"]
    run.restarts.append({"reason": event["reason"], "previous_step": event["previous_step"], "step": event["step"]})
    run.step = event["step"]
    run.eta_s = None
    run.progress = None
    if "total_steps" in event:
        run.total_steps = event["total_steps"]
    if "trial" in event:
        trial_went_back(run.trials, event)


def _train_rolled_back(run: RunState, event: Event) -> None:
    # the attempt goes on: no new attempt, steps may go back (reader rule 3)
    run.rollbacks.append(
        {
            "previous_step": event["previous_step"],
            "step": event["step"],
            "checkpoint": event["checkpoint"],
            "reason": event["reason"],
            "trial": event.get("trial"),
        }
    )
    run.step = event["step"]
    run.eta_s = None
    run.progress = None
    if "trial" in event:
        trial_went_back(run.trials, event)


def _eval_completed(run: RunState, event: Event) -> None:
    run.last_eval = evaluation(event)
    if "trial" in event:
        trial_evaluated(run.trials, event)


def _checkpoint_saved(run: RunState, event: Event) -> None:
    run.last_checkpoint = {"step": event["step"], "path": event["path"], "reason": event.get("reason")}


def _trial_started(run: RunState, event: Event) -> None:
    trial_started(run.trials, event)


def _trial_ended(run: RunState, event: Event) -> None:
    trial_ended(run.trials, event)


def _stop_requested(run: RunState, event: Event) -> None:
    run.stop_requested = True
    if "criterion" in event:
        run.stop_criterion = event["criterion"]


def _run_finished(run: RunState, event: Event) -> None:
    run.status = event["status"]
    run.finished = {key: value for key, value in event.items() if key not in _ENVELOPE_FIELDS}


#: every event -> its effect on the run (reader rules section 3); None: no effect beyond the
#: envelope's (a test requires every event of the contract here)
_EFFECTS: dict[str, Any] = {
    "run.started": _run_started,
    "run.heartbeat": None,
    "phase.progress": phase_progress,
    "train.rolled_back": _train_rolled_back,
    "phase.started": phase_started,
    "phase.ended": phase_ended,
    "train.step": _train_step,
    "train.epoch": _train_epoch,
    "train.restarted": _train_restarted,
    "eval.completed": _eval_completed,
    "checkpoint.saved": _checkpoint_saved,
    "trial.started": _trial_started,
    "trial.ended": _trial_ended,
    "stop.requested": _stop_requested,
    "run.finished": _run_finished,
}
