"""The run's lifetime as `Run` writes it: `run.started`, `stop.requested`, the events given
as they are (`emit`), `run.finished` with what is still open ended first, and the closing
of the sinks."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from trainwire.contract.status import stop_reason
from trainwire.writer.arguments import extension_fields
from trainwire.writer.ending import checked_ending, ending_for, finished_payload, required_finished
from trainwire.writer.fields import ErrorLike, Unset
from trainwire.writer.paths import PathLike
from trainwire.writer.payloads import stop_payload
from trainwire.writer.phase_events import PhaseEvents
from trainwire.writer.redaction import redact_config
from trainwire.writer.run_core import RunCore
from trainwire.writer.spans import OpenPhase
from trainwire.writer.started import provenance_field
from trainwire.writer.stream_loss import loss_summary
from trainwire.writer.trial_events import TrialEvents
from trainwire.writer.values import MAX_SAFE_INTEGER

__all__ = ["RunLifetime"]

logger = logging.getLogger("trainwire.writer")

#: the `phase.ended` status of a phase still open when the run ends, by the run's status
PHASE_ENDINGS = {"failed": "failed", "interrupted": "interrupted"}
#: the error of a trial still open when the run ends
TRIAL_NOT_ENDED = ("TrialNotEnded", "the run ended before the trial ended")


class RunLifetime:
    """The start, the stop requests and the end of a run; it ends the phases and trials the
    end finds open through their own writers. Each method is `Run`'s of the same name,
    documented there."""

    def __init__(self, core: RunCore, phases: PhaseEvents, trials: TrialEvents) -> None:
        self._core = core
        self._phases = phases
        self._trials = trials
        self.stop_reason: str | None = None  # the `run.finished` reason of an honoured stop
        self.stopped_for: str | None = None  # the criterion of stop_for()

    def start(
        self,
        total_steps: int | None,
        total_epochs: float | None | Unset,
        config: Any,
        seed: int | None,
        world_size: int | None,
        resumed_from: Mapping[str, Any] | None | Unset,
        provenance: bool | Mapping[str, Any],
        total_trials: int | None | Unset,
        name: str | None,
        tags: Iterable[str] | None,
    ) -> None:
        core = self._core
        if not core.active or core.started:
            return
        if name is not None:
            core.name = core.args.run_name(name)
        if tags is not None:
            core.tags = core.args.tags(tags)
        # collected before taking the lock: git may take a moment, the heartbeat must not wait
        redacted = redact_config(config) if config is not None else None
        seed = core.args.optional_int("run.started", "seed", seed, -MAX_SAFE_INTEGER)
        provenance_fields = provenance_field(provenance, seed, core.output_dir)
        if core.journal is not None:
            diff = core.journal.begin(redacted, provenance_fields)
            if diff is not None and provenance_fields is not None:
                provenance_fields["dirty_diff"] = diff
        with core.lock:
            if core.started:
                logger.debug("trainwire: start() called twice; ignored")
                return
            core.write_started(
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
        core = self._core
        if not core.active:
            return
        payload = stop_payload(core.args, source, signal, reason, requested_by)
        if payload is None:
            return
        with core.lock:
            self.stop_reason = stop_reason(source, payload["signal"])
            core.emit("stop.requested", payload)

    def stop_for(self, criterion: str, *, requested_by: str | None = None) -> None:
        core = self._core
        if not core.active:
            self.stopped_for = criterion
            return
        payload = stop_payload(
            core.args, "api", None, None, requested_by, criterion if isinstance(criterion, str) else str(criterion)
        )
        if payload is None:
            return
        with core.lock:
            self.stop_reason = stop_reason("api", None)
            self.stopped_for = payload["criterion"]
            core.emit("stop.requested", payload)

    def emit(self, event: str, fields: dict[str, Any]) -> None:
        core = self._core
        if not core.active:
            return
        checked = extension_fields(event, fields)
        if checked is None:
            return
        with core.lock:
            if event == "run.finished" and not core.finished:
                if core.emit(event, checked):
                    core.mark_finished(str(checked.get("status")))
            elif event == "run.started" and not core.started:
                core.started = True
                core.emit(event, checked)
            else:
                core.emit(event, checked)

    def finish(
        self,
        status: str = "succeeded",
        error: ErrorLike = None,
        reason: str | None = None,
        metrics: Mapping[str, Any] | None = None,
        artifacts: Mapping[str, PathLike] | None = None,
        checkpoint: PathLike | None = None,
        exit_code: int | None = None,
    ) -> None:
        core = self._core
        if exit_code is not None:
            exit_code = core.args.optional_int("run.finished", "exit_code", exit_code, -MAX_SAFE_INTEGER)
        if not core.active:  # nothing to write, but the status (and exit code) holds on every rank
            if not core.finished:
                core.host_exit_code = exit_code
                core.mark_finished(status)
            core.closed = True
            return
        with core.lock:
            if core.finished:
                logger.debug("trainwire: run %s already finished; finish(%r) ignored", core.run_id, status)
                return
            status, error, reason = checked_ending(core.args, status, error, reason, self.stop_reason)
            self._end_what_is_open(status)
            payload = finished_payload(
                core.args,
                core.output_dir,
                status=status,
                error=error,
                reason=reason,
                step=core.last_step,
                checkpoint=checkpoint,
                duration_s=core.spans.since(core.run_start),
                metrics=metrics,
                artifacts=artifacts,
                exit_code=exit_code,
            )
            if not core.emit("run.finished", payload):
                core.emit("run.finished", required_finished(payload))
            core.host_exit_code = exit_code
            core.mark_finished(status)
            self._say_loss()
        self.close()

    def _end_what_is_open(self, status: str) -> None:
        """Ends every phase and trial still open (lock held), the latest opened first: a phase
        as a `phase()` block ending like the run, a trial `failed` (a trial has no interrupted
        status, writer rule 14) with an error saying the run ended first."""
        phase_status = PHASE_ENDINGS.get(status, "ok")
        for opened in self._core.spans.still_open():
            if isinstance(opened, OpenPhase):
                self._phases.end_open_phase(opened, phase_status)
            else:
                self._trials.trial_ended(opened.trial, "failed", attempt=opened.attempt, error=TRIAL_NOT_ENDED)

    def _say_loss(self) -> None:
        """One line at the end of a run whose stream lost lines; the training's own outcome
        stands (writer rule 3)."""
        core = self._core
        losses = core.dispatcher.losses
        if losses and core.status is not None:
            summary = loss_summary(core.run_id, losses, core.dispatcher.dispatched, core.status, core.exit_code)
            logger.warning("%s", summary)

    def ending_for_block(self, error: BaseException | None) -> tuple[str, dict[str, Any]]:
        """The status and `finish()` arguments for a block that ended with `error`: one that
        ended without an error after a stop is interrupted."""
        if error is None and self.stopped_for is not None:
            return "interrupted", {"reason": self.stop_reason}
        return ending_for(error, self.stop_reason)

    def close(self) -> None:
        core = self._core
        core.stop_heartbeat()
        with core.lock:
            if core.closed:
                return
            core.closed = True
            core.lines.close()
