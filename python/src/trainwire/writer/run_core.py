"""The core of the emitter's `Run`: the run's state and how one event is written.

`RunCore` holds what every event needs: the lock, the sinks behind `LineWriter`, started
and finished, the step bookkeeping (`StepProgress`, one per trial), each thread's scopes,
the open spans and the heartbeat; `emit` writes one event (the pending step first) and
`ready` starts a run its caller did not start. `Run` builds one core and hands it to each of
its collaborators (`TrainingEvents`, `PhaseEvents`, `TrialEvents`, `RunLifetime`), which
read and write the run's state through the public names below: they are the package's
own interface, not the user's (`Run` is).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from trainwire.contract.clock import Clock, SystemClock
from trainwire.contract.status import EXIT_CODES
from trainwire.writer.arguments import Arguments, checked_run_id
from trainwire.writer.checks import Complaints
from trainwire.writer.fields import UNSET
from trainwire.writer.heartbeat import Heartbeat
from trainwire.writer.journal import Journal
from trainwire.writer.kubeflow import reporter_for_run
from trainwire.writer.lines import LineWriter
from trainwire.writer.outputs import open_sinks
from trainwire.writer.paths import PathLike
from trainwire.writer.rank import global_rank
from trainwire.writer.scopes import ThreadScopes
from trainwire.writer.sinks import Dispatcher, Sink
from trainwire.writer.spans import OpenSpans
from trainwire.writer.started import required_started, started_payload
from trainwire.writer.step_progress import StepProgress

__all__ = ["RunCore"]


class RunCore:
    """The state of one run's writer and the writing of one event; its arguments are
    `Run`'s, documented there with their defaults."""

    def __init__(
        self,
        *,
        output_dir: PathLike | None,
        run_id: str | None,
        producer: Mapping[str, Any] | None,
        stdout: bool,
        callbacks: Iterable[Callable[[Any], object]],
        sinks: Iterable[Sink],
        file_name: str,
        fsync: bool,
        step_interval_s: float,
        heartbeat_interval_s: float | None,
        heartbeat_thread: bool,
        clock: Clock | None,
        rank: int | None,
        stage: Mapping[str, Any] | None,
        journal: bool,
        config_reference: PathLike | None,
        objective: tuple[str, str] | None,
        name: str | None,
        tags: Iterable[str] | None,
        strict: bool,
        kubeflow: bool | None = None,
    ) -> None:
        self.complain = Complaints(strict)
        self.args = Arguments(self.complain)
        self.clock = clock = clock if clock is not None else SystemClock()
        # One clock reading names the run and dates its run.started, so the two never differ.
        made_at = clock.now()
        self.started_at: float | None = made_at if run_id is None else None
        self.run_id = run_id = checked_run_id(run_id, lambda: made_at)
        self.active = (global_rank() if rank is None else rank) == 0
        self.output_dir = os.path.abspath(output_dir) if output_dir is not None else None
        self._producer = self.args.producer(producer)
        self.monotonic = clock.monotonic
        self._heartbeat_interval_s = self.args.heartbeat_interval(heartbeat_interval_s)
        self._heartbeat_thread_enabled = heartbeat_thread
        self._objective = objective  # written into run.started
        self.name = self.args.run_name(name)  # written into run.started, as the tags
        self.tags = self.args.tags(tags)

        # Reentrant: a callback sink may itself call back into the run.
        self.lock = threading.RLock()
        self.started = False
        self.finished = False
        self.closed = False
        self.status: str | None = None
        self.run_start = self.monotonic()
        self.spans = OpenSpans(self.monotonic)
        self.journal: Journal | None = None
        self.steps = StepProgress(step_interval_s)  # train.step state outside trials (writer rules 5 and 6)
        self.trial_steps: dict[int, StepProgress] = {}  # the same, of each trial's latest attempt
        self.scopes = ThreadScopes()
        self.last_step: int | None = None  # of the run, whichever trial reported it
        self.host_exit_code: int | None = None  # the host's own, given to finish()
        self.stop_channels: Callable[[], list[str]] = list  # what the run listens to (`Run` sets it)
        self._heartbeat: Heartbeat | None = None
        made: list[Sink] = []
        self.kubeflow: Sink | None = None  # the Kubeflow TrainJob reporter, inside one
        if self.active:
            made, self.journal = open_sinks(
                self.output_dir,
                run_id=run_id,
                config_reference=config_reference,
                file_name=file_name,
                fsync=fsync,
                journal=journal,
                stdout=stdout,
                callbacks=callbacks,
                sinks=sinks,
                step_interval_s=step_interval_s,
            )
            self.kubeflow = reporter_for_run(kubeflow)  # last: it sees what the stream took
            if self.kubeflow is not None:
                made.append(self.kubeflow)
        self.dispatcher = Dispatcher(made, strict=strict)
        stage_field = self.args.stage(stage)
        self.lines = LineWriter(run_id, stage_field, self.dispatcher, clock.now, self.monotonic, self.complain)
        if self.journal is not None:
            self.journal.stream_completeness = self.dispatcher.completeness  # lines lost, for the summary
            self.lines.left_out = self.journal.keep_step  # every step kept, written or not
            self.lines.before_finished = self.journal.append_kept_now  # all kept steps on disk first
        self.step_envelope = self.lines.new_line("train.step")  # copied for each step

    @property
    def exit_code(self) -> int | None:
        """The host's own exit code given to `finish()`, else the final status's; None until finished."""
        if self.status is None:
            return None
        return EXIT_CODES.get(self.status) if self.host_exit_code is None else self.host_exit_code

    def heartbeat(self) -> None:
        """Writes `run.heartbeat` with the open phase and the last step (null when none)."""
        if not self.active:
            return
        with self.lock:
            if self.finished:  # a beat racing the end of the run: nothing to say
                return
            self.emit("run.heartbeat", {"phase": self.spans.innermost_phase, "step": self.last_step})

    def write_started(
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
        self.started = True
        self.run_start = self.monotonic()
        total = self.steps.total_steps = self.args.optional_int("run.started", "total_steps", total_steps)
        payload = started_payload(
            self.args,
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
            name=self.name,
            tags=self.tags,
            stop_channels=self.stop_channels(),
        )
        if not self.emit("run.started", payload, self.started_at):
            self.emit("run.started", required_started(payload), self.started_at)
        if self._heartbeat_interval_s is not None and self._heartbeat_thread_enabled:
            self._start_heartbeat()

    def trial_for(self, event: str, trial: Any) -> int | None:
        """The trial an event belongs to: `trial` when given, else the thread's trial scope
        (opened first: see `open_scope`)."""
        if trial is not None:
            return self.args.trial(event, trial)
        self.open_scope()
        return self.scopes.trial

    def open_scope(self) -> None:
        """Calls the opening of the thread's innermost trial scope, once (`trial_scope`); an
        opening that raises is logged, never raised into training."""
        opening = self.scopes.take_opening()
        if opening is None:
            return
        try:
            opening()
        except Exception as error:  # writer rule 3
            self.complain.warn_once("trial scope opening", f"the trial scope's opening failed: {error!r}")

    @staticmethod
    def stamped(payload: dict[str, Any], trial: int | None) -> dict[str, Any]:
        if trial is not None:
            payload["trial"] = trial  # last: it is the last field of every event that has it
        return payload

    def steps_for(self, trial: int | None) -> StepProgress:
        """The step bookkeeping of `trial`'s latest attempt, or of the run outside trials (lock held)."""
        if trial is None:
            return self.steps
        steps = self.trial_steps.get(trial)
        if steps is None:
            steps = self.trial_steps[trial] = StepProgress(self.steps.interval_s, self.steps.total_steps)
        return steps

    def emit_active(self, event: str, payload: dict[str, Any]) -> None:
        if not self.active:
            return
        with self.lock:
            self.emit(event, payload)

    # the methods below are called with the lock held

    def emit(self, event: str, payload: dict[str, Any], at: float | None = None) -> bool:
        """Writes an event other than a fresh step (dated `at`, else now): the pending step
        goes first. False when nothing was written."""
        if self.finished or not self.ready(event):
            return False
        self.lines.flush_pending()
        line = self.lines.new_line(event)
        line.update(payload)
        return self.lines.write(line, at)

    def ready(self, event: str) -> bool:
        """Whether `event` may be written now: never after `run.finished`; the run is
        started first when the caller did not start it (lock held)."""
        if self.finished:
            self.complain("after run.finished", f"run {self.run_id} already finished; {event} not written")
            return False
        if not self.started and event != "run.started":
            self.complain("not started", f"{event} before start(); run.started written first")
            self.write_started()
        return True

    def mark_finished(self, status: str) -> None:
        self.finished = True
        self.status = status
        if self._heartbeat is not None:
            self._heartbeat.stop(join=False)

    # -- heartbeat ---------------------------------------------------------------------

    def _start_heartbeat(self) -> None:
        if self._heartbeat is not None or self.finished or self._heartbeat_interval_s is None:
            return
        self._heartbeat = Heartbeat(
            self._heartbeat_interval_s,
            idle_s=lambda: self.monotonic() - self.lines.last_write,
            beat=self.heartbeat,
            name=f"trainwire-heartbeat-{self.run_id}",
        )
        self._heartbeat.start()

    def stop_heartbeat(self) -> None:
        if self._heartbeat is not None:
            self._heartbeat.stop()
