"""The core of the emitter's `Run`: the run's state and how one event is written.

`RunCore` holds what every event needs: the lock, the sinks behind `LineWriter`, started
and finished, the step bookkeeping (`StepProgress`, one per trial), each thread's scopes,
the open spans and the heartbeat; `_emit` writes one event (the pending step first) and
`_ready` starts a run its caller did not start. The events are written by the classes
`Run` is made of, one concern each: `TrainingEvents` (steps, epochs, restarts, rollbacks,
evaluations, checkpoints), `PhaseEvents` (phases and their items), `TrialEvents` (a
search's trials) and `Run` itself (start, stop, end).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from trainwire.contract.clock import Clock, SystemClock
from trainwire.contract.layout import STREAM_FILE
from trainwire.contract.status import EXIT_CODES
from trainwire.writer.arguments import Arguments, checked_run_id
from trainwire.writer.checks import Complaints
from trainwire.writer.fields import UNSET
from trainwire.writer.heartbeat import Heartbeat
from trainwire.writer.journal import Journal
from trainwire.writer.lines import LineWriter
from trainwire.writer.outputs import open_sinks
from trainwire.writer.paths import PathLike, relative_path
from trainwire.writer.rank import global_rank
from trainwire.writer.scopes import ThreadScopes
from trainwire.writer.sinks import Dispatcher, Sink
from trainwire.writer.spans import OpenSpans
from trainwire.writer.started import required_started, started_payload
from trainwire.writer.step_progress import StepProgress

__all__ = ["RunCore"]


class RunCore:
    """The state of one run's writer and the writing of one event (see `Run`, whose
    constructor this is)."""

    def __init__(
        self,
        output_dir: PathLike | None = None,
        *,
        run_id: str | None = None,
        producer: Mapping[str, Any] | None = None,
        stdout: bool = False,
        callbacks: Iterable[Callable[[Any], object]] = (),
        sinks: Iterable[Sink] = (),
        file_name: str = STREAM_FILE,
        fsync: bool = False,
        step_interval_s: float = 1.0,
        heartbeat_interval_s: float | None = 30.0,
        heartbeat_thread: bool = True,
        clock: Clock | None = None,
        rank: int | None = None,
        stage: Mapping[str, Any] | None = None,
        journal: bool = True,
        config_reference: PathLike | None = None,
        objective: tuple[str, str] | None = None,
        name: str | None = None,
        tags: Iterable[str] | None = None,
        strict: bool = False,
    ) -> None:
        self._complain = Complaints(strict)
        self._args = Arguments(self._complain)
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._run_id = run_id = checked_run_id(run_id, self._clock.now)
        self._active = (global_rank() if rank is None else rank) == 0
        self.output_dir = os.path.abspath(output_dir) if output_dir is not None else None
        self._producer = self._args.producer(producer)
        self._stage = self._args.stage(stage)
        self._now = self._clock.now
        self._monotonic = self._clock.monotonic
        self._heartbeat_interval_s = self._args.heartbeat_interval(heartbeat_interval_s)
        self._heartbeat_thread_enabled = heartbeat_thread
        self._objective = objective  # written into run.started
        self._name = self._args.run_name(name)  # written into run.started, as the tags
        self._tags = self._args.tags(tags)

        # Reentrant: a callback sink may itself call back into the run.
        self._lock = threading.RLock()
        self._started = False
        self._finished = False
        self._closed = False
        self._status: str | None = None
        self._run_start = self._monotonic()
        self._spans = OpenSpans(self._monotonic)
        self.stop_reason: str | None = None
        self._journal: Journal | None = None
        self._steps = StepProgress(step_interval_s)  # train.step state outside trials (writer rules 5 and 6)
        self._trial_steps: dict[int, StepProgress] = {}  # the same, of each trial's latest attempt
        self._scopes = ThreadScopes()
        self._last_step: int | None = None  # of the run, whichever trial reported it
        self._exit_code: int | None = None  # the host's own, given to finish()
        self._stopped_for: str | None = None  # the criterion of stop_for()
        self._heartbeat: Heartbeat | None = None
        made: list[Sink] = []
        if self._active:
            made, self._journal = open_sinks(
                self.output_dir,
                run_id=run_id,
                config_reference=config_reference,
                file_name=file_name,
                fsync=fsync,
                journal=journal,
                stdout=stdout,
                callbacks=callbacks,
                sinks=sinks,
            )
        self._dispatcher = Dispatcher(made, strict=strict)
        self._lines = LineWriter(run_id, self._stage, self._dispatcher, self._now, self._monotonic, self._complain)
        if self._journal is not None:
            self._lines.left_out = self._journal.keep_step  # every step kept, written or not
        self._step_envelope = self._lines.new_line("train.step")  # copied for each step

    @property
    def run_id(self) -> str:
        return self._run_id

    @property
    def name(self) -> str | None:
        """The run's name (`run.started.name`), or None."""
        return self._name

    @property
    def tags(self) -> list[str]:
        """The run's tags (`run.started.tags`)."""
        return list(self._tags or ())

    @property
    def status(self) -> str | None:
        """The `run.finished` status, or None until the run finished."""
        return self._status

    @property
    def exit_code(self) -> int | None:
        """The process exit code: the host's own given to `finish()`, else the final status's
        (see `EXIT_CODES`); None until finished."""
        if self._status is None:
            return None
        return EXIT_CODES.get(self._status) if self._exit_code is None else self._exit_code

    @property
    def last_step(self) -> int | None:
        """The last step reported (written or not, in any trial), or None before the first."""
        return self._last_step

    @property
    def current_trial(self) -> int | None:
        """The trial of the calling thread's innermost `trial_scope` (or `trial()`), else None."""
        return self._scopes.trial

    @property
    def started(self) -> bool:
        """Whether `run.started` was written (always False on a rank that does not write)."""
        return self._started

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def active(self) -> bool:
        """Whether this process writes (global rank 0)."""
        return self._active

    def heartbeat(self) -> None:
        """Writes `run.heartbeat` with the open phase and the last step (null when none)."""
        if not self._active:
            return
        with self._lock:
            if self._finished:  # a beat racing the end of the run: nothing to say
                return
            self._emit("run.heartbeat", {"phase": self._spans.innermost_phase, "step": self._last_step})

    def relative_path(self, path: PathLike) -> str | None:
        """`path` relative to the output directory with `/` separators, or None when it is
        outside (or cannot be written as a contract path); see `paths.relative_path`."""
        return relative_path(path, self.output_dir)

    def _write_started(
        self,
        total_steps: Any = None,
        total_epochs: Any = UNSET,
        config: dict[str, Any] | None = None,
        provenance: dict[str, Any] | None = None,
        world_size: Any = None,
        resumed_from: Any = UNSET,
        total_trials: Any = UNSET,
    ) -> None:
        """Writes `run.started` (lock held); when the full line cannot be written, the
        line with its required fields only, so that the run always has its first line."""
        self._started = True
        self._run_start = self._monotonic()
        total = self._steps.total_steps = self._args.optional_int("run.started", "total_steps", total_steps)
        payload = started_payload(
            self._args,
            self.output_dir,
            producer=self._producer,
            total_steps=total,
            total_epochs=total_epochs,
            config=config,
            provenance=provenance,
            world_size=world_size,
            resumed_from=resumed_from,
            heartbeat_interval_s=self._heartbeat_interval_s,
            total_trials=total_trials,
            objective=self._objective,
            name=self._name,
            tags=self._tags,
        )
        if not self._emit("run.started", payload):
            self._emit("run.started", required_started(payload))
        if self._heartbeat_interval_s is not None and self._heartbeat_thread_enabled:
            self._start_heartbeat()

    def _trial(self, event: str, trial: Any) -> int | None:
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

    def _steps_for(self, trial: int) -> StepProgress:
        """The step bookkeeping of `trial`'s latest attempt (lock held)."""
        steps = self._trial_steps.get(trial)
        if steps is None:
            steps = self._trial_steps[trial] = StepProgress(self._steps.interval_s, self._steps.total_steps)
        return steps

    def _emit_active(self, event: str, payload: dict[str, Any]) -> None:
        if not self._active:
            return
        with self._lock:
            self._emit(event, payload)

    # the methods below are called with the lock held

    def _emit(self, event: str, payload: dict[str, Any]) -> bool:
        """Writes an event other than a fresh step: the pending step goes first. False when
        nothing was written."""
        if self._finished or not self._ready(event):
            return False
        self._lines.flush_pending()
        line = self._lines.new_line(event)
        line.update(payload)
        return self._lines.write(line)

    def _ready(self, event: str) -> bool:
        """Whether `event` may be written now: never after `run.finished`; the run is
        started first when the caller did not start it (lock held)."""
        if self._finished:
            self._complain("after run.finished", f"run {self._run_id} already finished; {event} not written")
            return False
        if not self._started and event != "run.started":
            self._complain("not started", f"{event} before start(); run.started written first")
            self._write_started()
        return True

    def _mark_finished(self, status: str) -> None:
        self._finished = True
        self._status = status
        if self._heartbeat is not None:
            self._heartbeat.stop(join=False)

    # -- heartbeat ---------------------------------------------------------------------

    def _start_heartbeat(self) -> None:
        if self._heartbeat is not None or self._finished or self._heartbeat_interval_s is None:
            return
        self._heartbeat = Heartbeat(
            self._heartbeat_interval_s,
            idle_s=lambda: self._monotonic() - self._lines.last_write,
            beat=self.heartbeat,
            name=f"trainwire-heartbeat-{self._run_id}",
        )
        self._heartbeat.start()

    def _stop_heartbeat(self) -> None:
        if self._heartbeat is not None:
            self._heartbeat.stop()
