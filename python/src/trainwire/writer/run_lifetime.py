"""The run's lifetime as `Run` writes it: `run.started` and the heartbeat, `stop.requested`, the
events given as they are (`emit`), `run.finished` with what is still open ended first, and
the closing of the sinks."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from trainwire.contract.status import EXIT_CODES, stop_reason
from trainwire.writer.arguments import extension_fields
from trainwire.writer.ending import checked_ending, ending_for, finished_payload, required_finished
from trainwire.writer.fields import UNSET, ErrorLike, Unset
from trainwire.writer.heartbeat import Heartbeat
from trainwire.writer.journal import Journal
from trainwire.writer.paths import PathLike
from trainwire.writer.payloads import stop_payload
from trainwire.writer.phase_events import _PhaseEvents
from trainwire.writer.redaction import redact_config
from trainwire.writer.spans import OpenPhase
from trainwire.writer.started import provenance_field, required_started, started_payload
from trainwire.writer.stop_control import StopControl
from trainwire.writer.stream_loss import loss_summary
from trainwire.writer.trial_events import _TrialEvents
from trainwire.writer.values import MAX_SAFE_INTEGER

__all__: list[str] = []  # a base of `Run` only

logger = logging.getLogger("trainwire.writer")

#: the `phase.ended` status of a phase still open when the run ends, by the run's status
PHASE_ENDINGS = {"failed": "failed", "interrupted": "interrupted"}
#: the error of a trial still open when the run ends
TRIAL_NOT_ENDED = ("TrialNotEnded", "the run ended before the trial ended")


class _Lifetime(_TrialEvents, _PhaseEvents):
    """The start, the heartbeat, the stop requests and the end of a run, and the state they
    change: the gate's flags, the status, the name and tags. Its bases are the events it ends
    when the run's end finds them open."""

    _producer: dict[str, Any]
    _objective: tuple[str, str] | None  # written into run.started
    _name: str | None  # written into run.started, as the tags
    _tags: list[str] | None
    _heartbeat_interval_s: float | None
    _heartbeat_thread: bool
    _started_at: float | None  # the clock reading that named the run, when it made the id
    _run_start: float  # monotonic, for run.finished's duration
    _journal: Journal | None
    _heartbeat: Heartbeat | None = None
    _status: str | None = None
    _closed = False
    _host_exit_code: int | None = None  # the host's own, given to finish()
    _stop_reason: str | None = None  # the `run.finished` reason of an honoured stop
    _stopped_for: str | None = None  # the criterion of stop_for()

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
        return EXIT_CODES.get(self._status) if self._host_exit_code is None else self._host_exit_code

    @property
    def stop_reason(self) -> str | None:
        """The `run.finished` reason of the latest `stop.requested` (`stop_reason`), or None."""
        return self._stop_reason

    @property
    def started(self) -> bool:
        """Whether `run.started` was written (always False on a rank that does not write)."""
        return self._started

    @property
    def closed(self) -> bool:
        """Whether the sinks are closed (`close()`, `finish()`)."""
        return self._closed

    def start(
        self,
        *,
        total_steps: int | None = None,
        total_epochs: float | None | Unset = UNSET,
        config: Any = None,
        seed: int | None = None,
        world_size: int | None = None,
        resumed_from: Mapping[str, Any] | None | Unset = UNSET,
        provenance: bool | Mapping[str, Any] = True,
        total_trials: int | None | Unset = UNSET,
        name: str | None = None,
        tags: Iterable[str] | None = None,
    ) -> None:
        """Writes `run.started` and starts the heartbeat thread.

        `provenance=True` collects it (`collect_provenance(seed)`); a mapping is written
        as given; False leaves it out. `resumed_from` is `{run_id, checkpoint, step}`.
        `total_trials` is the number of trials a search plans. `name` and `tags` given here
        replace the constructor's (for an integration that learns them at the start).
        """
        if not self._active or self._started:
            return
        if name is not None:
            self._name = self._args.run_name(name)
        if tags is not None:
            self._tags = self._args.tags(tags)
        # collected before taking the lock: git may take a moment, the heartbeat must not wait
        redacted = redact_config(config) if config is not None else None
        seed = self._args.optional_int("run.started", "seed", seed, -MAX_SAFE_INTEGER)
        provenance_fields = provenance_field(provenance, seed, self._output_dir)
        if self._journal is not None:
            diff = self._journal.begin(redacted, provenance_fields)
            if diff is not None and provenance_fields is not None:
                provenance_fields["dirty_diff"] = diff
        with self._lock:
            if self._started:
                logger.debug("trainwire: start() called twice; ignored")
                return
            self._write_started(
                total_steps, total_epochs, redacted, provenance_fields, world_size, resumed_from, total_trials
            )

    def stop_requested(
        self,
        source: str,
        *,
        signal: str | None = None,
        reason: str | None = None,
        requested_by: str | None = None,
    ) -> None:
        """Writes `stop.requested` and remembers the `run.finished` reason (`stop_reason`)
        that `finish("interrupted")` will use."""
        if not self._active:
            return
        payload = stop_payload(self._args, source, signal, reason, requested_by)
        if payload is None:
            return
        with self._lock:
            self._stop_reason = stop_reason(source, payload["signal"])
            self._emit("stop.requested", payload)

    def stop_for(self, criterion: str, *, requested_by: str | None = None) -> None:
        """Writes `stop.requested` (source `api`) with the stop `criterion` that was met
        (a kill criterion: `loss > 10 after step 500`); the run then ends `interrupted`
        (reason `api`) when its block ends, as after any honoured stop. Stopping the
        training loop is the caller's: this does not raise."""
        if not self._active:
            self._stopped_for = criterion
            return
        payload = stop_payload(
            self._args, "api", None, None, requested_by, criterion if isinstance(criterion, str) else str(criterion)
        )
        if payload is None:
            return
        with self._lock:
            self._stop_reason = stop_reason("api", None)
            self._stopped_for = payload["criterion"]
            self._emit("stop.requested", payload)

    def emit(self, event: str, **fields: Any) -> None:
        """Writes any event as given: extensions (`x_...` fields, new event names).

        An invalid event name, or a field that would overwrite the envelope, is dropped
        with a WARNING.
        """
        if not self._active:
            return
        checked = extension_fields(event, fields)
        if checked is None:
            return
        with self._lock:
            if event == "run.finished" and not self._finished:
                if self._emit(event, checked):
                    self._mark_finished(str(checked.get("status")))
            elif event == "run.started" and not self._started:
                self._started = True
                self._emit(event, checked)
            else:
                self._emit(event, checked)

    def finish(
        self,
        status: str = "succeeded",
        *,
        error: ErrorLike = None,
        reason: str | None = None,
        metrics: Mapping[str, Any] | None = None,
        artifacts: Mapping[str, PathLike] | None = None,
        checkpoint: PathLike | None = None,
        exit_code: int | None = None,
    ) -> None:
        """Writes `run.finished`, exactly once, then closes the run (later calls are ignored).

        The phases and trials still open are ended first, the latest opened first: a phase
        `ok`, `failed` or `interrupted` as the run ends, a trial `failed` with the error
        `TrialNotEnded`. When the stream lost lines (a full disk, a file that could not be
        opened), the ending and `exit_code` stay the training's own: one WARNING line says
        how many lines were lost, where and why, and the journal's summary records it
        (`completeness`). An interrupted run without `reason` takes the one of its `stop.requested`.
        Paths outside the output directory are left out with a WARNING. `exit_code` is
        a host's own code for the ending (a CLI with codes of its own), written and kept
        as `Run.exit_code` in place of the status's.
        """
        if exit_code is not None:
            exit_code = self._args.optional_int("run.finished", "exit_code", exit_code, -MAX_SAFE_INTEGER)
        if not self._active:  # nothing to write, but the status (and exit code) holds on every rank
            if not self._finished:
                self._host_exit_code = exit_code
                self._mark_finished(status)
            self._closed = True
            return
        with self._lock:
            if self._finished:
                logger.debug("trainwire: run %s already finished; finish(%r) ignored", self._run_id, status)
                return
            status, error, reason = checked_ending(self._args, status, error, reason, self._stop_reason)
            self._end_what_is_open(status)
            payload = finished_payload(
                self._args,
                self._output_dir,
                status=status,
                error=error,
                reason=reason,
                step=self._last_step,
                checkpoint=checkpoint,
                duration_s=self._spans.since(self._run_start),
                metrics=metrics,
                artifacts=artifacts,
                exit_code=exit_code,
            )
            if not self._emit("run.finished", payload):
                self._emit("run.finished", required_finished(payload))
            self._host_exit_code = exit_code
            self._mark_finished(status)
            self._say_loss()
        self.close()

    def _end_what_is_open(self, status: str) -> None:
        """Ends every phase and trial still open (lock held), the latest opened first: a phase
        as a `phase()` block ending like the run, a trial `failed` (a trial has no interrupted
        status, writer rule 14) with an error saying the run ended first."""
        phase_status = PHASE_ENDINGS.get(status, "ok")
        for opened in self._spans.still_open():
            if isinstance(opened, OpenPhase):
                self._end_open_phase(opened, phase_status)
            else:
                self.trial_ended(opened.trial, "failed", attempt=opened.attempt, error=TRIAL_NOT_ENDED)

    def _say_loss(self) -> None:
        """One line at the end of a run whose stream lost lines; the training's own outcome
        stands (writer rule 3)."""
        losses = self._dispatcher.lost_lines()
        if losses and self._status is not None:
            summary = loss_summary(self._run_id, losses, self._dispatcher.dispatched, self._status, self.exit_code)
            logger.warning("%s", summary)

    def finish_for(self, error: BaseException | None) -> None:
        """Finishes as a block that ended with `error` does (`status_for_exception`): an
        interrupted run takes the stop's reason, a failed one the error; a block that ended
        after `stop_for()` is interrupted. Goes through `finish()`, so an override sees it."""
        details: dict[str, Any]
        if error is None and self._stopped_for is not None:
            status, details = "interrupted", {"reason": self._stop_reason}
        else:
            status, details = ending_for(error, self._stop_reason)
        if status == "interrupted" and self._active and not self._finished:  # on_stop: rank 0 only
            checkpoint = self._stop.save_checkpoint(self._last_step)
            if checkpoint is not None:
                self.checkpoint(self._last_step or 0, checkpoint, reason="stop")
                details["checkpoint"] = checkpoint
        self.finish(status, **details)

    def adopt_stop_control(self, control: StopControl) -> None:
        """Called by a `StopControl` made with `run=` this run: it decides from then on."""
        self._stop.adopt(control)

    def close(self) -> None:
        """Stops the heartbeat and closes the sinks (without writing `run.finished`)."""
        if self._heartbeat is not None:
            self._heartbeat.stop()
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._lines.close()

    # -- run.started and the heartbeat --------------------------------------------------------

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
            self._output_dir,
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
            stop_channels=self._stop.channels(),
        )
        if not self._emit("run.started", payload, self._started_at):
            self._emit("run.started", required_started(payload), self._started_at)
        if self._heartbeat_interval_s is not None and self._heartbeat_thread and self._heartbeat is None:
            self._heartbeat = Heartbeat(
                self._heartbeat_interval_s,
                idle_s=lambda: self._monotonic() - self._lines.last_write,
                beat=self.heartbeat,
                name=f"trainwire-heartbeat-{self._run_id}",
            )
            self._heartbeat.start()

    def heartbeat(self) -> None:
        """Writes `run.heartbeat` with the open phase and the last step (null when none)."""
        if not self._active:
            return
        with self._lock:
            if self._finished:  # a beat racing the end of the run: nothing to say
                return
            self._emit("run.heartbeat", {"phase": self._spans.innermost_phase, "step": self._last_step})

    def _mark_finished(self, status: str) -> None:
        self._finished = True
        self._status = status
        if self._heartbeat is not None:
            self._heartbeat.stop(join=False)
