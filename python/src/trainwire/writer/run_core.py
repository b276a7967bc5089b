"""The core every part of the emitter's `Run` writes through: the lock, the write gate and
writing one event.

`Run` (`run.py`) is assembled from one private class per concern, each holding its events'
public methods (signature, docstring and body, written once) and the state those methods
change: `_TrainingEvents` (`training_events.py`), `_PhaseEvents` (`phase_events.py`),
`_TrialEvents` (`trial_events.py`) and `_Lifetime` (`run_lifetime.py`, the start, stop and
end). They share only this core: what `Run.__init__` builds once (the lock, the line writer,
the argument checks, the clock, the thread scopes, the open spans, the stop) and the gate
every event passes (`_ready`, `_emit`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from trainwire.writer.arguments import Arguments
from trainwire.writer.checks import Complaints
from trainwire.writer.lines import LineWriter
from trainwire.writer.paths import PathLike, relative_path
from trainwire.writer.run_stop import RunStop
from trainwire.writer.scopes import ThreadScopes
from trainwire.writer.sinks import Dispatcher, Sink
from trainwire.writer.spans import OpenSpans

__all__: list[str] = []  # a base of `Run` only


class _RunCore:
    """What every concern of a `Run` shares, built by `Run.__init__` and never replaced; the
    flags of the gate (`_started`, `_finished`) are changed by `_Lifetime` alone."""

    # Reentrant: a callback sink may itself call back into the run.
    _lock: threading.RLock
    _active: bool  # global rank 0: the only process that writes
    _run_id: str
    _output_dir: str | None
    _args: Arguments
    _complain: Complaints
    _monotonic: Callable[[], float]
    _dispatcher: Dispatcher
    _kubeflow: Sink | None  # the Kubeflow TrainJob reporter, inside one
    _lines: LineWriter
    _scopes: ThreadScopes  # each thread's trial scopes and open phase counts
    _spans: OpenSpans  # the phases and trials open, in the order they opened
    _step_interval_s: float  # the throttle of `train.step` and `phase.progress` (writer rule 5)
    _stop: RunStop
    _started = False
    _finished = False

    @property
    def run_id(self) -> str:
        """The run's id (`run_id` given, or a new one)."""
        return self._run_id

    @property
    def output_dir(self) -> str | None:
        """The absolute output directory, or None without one."""
        return self._output_dir

    @property
    def active(self) -> bool:
        """Whether this process writes (global rank 0)."""
        return self._active

    @property
    def reports_to_kubeflow(self) -> bool:
        """True when the run posts its progress to a Kubeflow TrainJob's status."""
        return self._kubeflow is not None

    @property
    def current_trial(self) -> int | None:
        """The trial of the calling thread's innermost `trial_scope` (or `trial()`), else None."""
        return self._scopes.trial

    def relative_path(self, path: PathLike) -> str | None:
        """`path` relative to the output directory with `/` separators, or None when it is
        outside (or cannot be written as a contract path); see `paths.relative_path`."""
        return relative_path(path, self._output_dir)

    # -- the gate every event passes --------------------------------------------------------

    def _write_started(self) -> None:
        """Writes `run.started` for a run its caller did not start (lock held): `_Lifetime`'s."""
        raise NotImplementedError

    def _trial_for(self, event: str, trial: Any) -> int | None:
        """The trial an event belongs to: `trial` when given, else the thread's trial scope
        (opened first: see `_open_scope`)."""
        if trial is not None:
            return self._args.trial(event, trial)
        self._open_scope()
        return self._scopes.trial

    def _open_scope(self) -> None:
        """Calls the opening of the thread's innermost trial scope, once (`trial_scope`); an
        opening that raises is logged, never raised into training."""
        opening = self._scopes.take_opening()
        if opening is None:
            return
        try:
            opening()
        except Exception as error:  # writer rule 3
            self._complain.warn_once("trial scope opening", f"the trial scope's opening failed: {error!r}")

    @staticmethod
    def _stamped(payload: dict[str, Any], trial: int | None) -> dict[str, Any]:
        if trial is not None:
            payload["trial"] = trial  # last: it is the last field of every event that has it
        return payload

    def _emit_active(self, event: str, payload: dict[str, Any]) -> None:
        if not self._active:
            return
        with self._lock:
            self._emit(event, payload)

    # the methods below are called with the lock held

    def _emit(self, event: str, payload: dict[str, Any], at: float | None = None) -> bool:
        """Writes an event other than a fresh step (dated `at`, else now): the pending step
        goes first. False when nothing was written."""
        if self._finished or not self._ready(event):
            return False
        self._lines.flush_pending()
        line = self._lines.new_line(event)
        line.update(payload)
        return self._lines.write(line, at)

    def _ready(self, event: str) -> bool:
        """Whether `event` may be written now: never after `run.finished`; the run is
        started first when the caller did not start it."""
        if self._finished:
            self._complain("after run.finished", f"run {self._run_id} already finished; {event} not written")
            return False
        if not self._started and event != "run.started":
            self._complain("not started", f"{event} before start(); run.started written first")
            self._write_started()
        return True
