"""The emitter: `Run` writes one run's events to its sinks, following docs/writer-rules.md.

`Run` is the public face: one method per event, each with its docstring. It is made of one
class per concern, each in the module of its name: `RunCore` (the run's state, the lock,
writing one event, the heartbeat), `TrainingEvents` (steps, epochs, restarts, rollbacks,
evaluations, checkpoints), `PhaseEvents` (phases and their items) and `TrialEvents` (a
search's trials); `Run` adds the run's start, stop and end. The work is done by the
parts beside them: `arguments` (checking and converting what callers pass), `started`,
`payloads` and `ending` (the payloads of `run.started`, of the events during a run and of
`run.finished`, with their fallbacks), `outputs` (the sinks), `LineWriter` (envelope and
sequencing), `StepProgress` (throttle, ETA, attempts; one per trial), `ThreadScopes` (each
thread's trial scope and phase counts), `OpenSpans` (open phases and trials, their
durations) and `Heartbeat` (liveness).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from types import TracebackType
from typing import Any, Literal

from trainwire.contract.status import stop_reason
from trainwire.writer.arguments import extension_fields
from trainwire.writer.checks import RejectedInput
from trainwire.writer.ending import checked_ending, ending_for, finished_payload, required_finished
from trainwire.writer.fields import UNSET, ErrorLike, Unset, clean_metrics, error_info, new_run_id
from trainwire.writer.paths import PathLike
from trainwire.writer.payloads import stop_payload
from trainwire.writer.phase_events import PhaseEvents
from trainwire.writer.redaction import redact_config
from trainwire.writer.run_core import RunCore
from trainwire.writer.spans import OpenPhase
from trainwire.writer.started import provenance_field
from trainwire.writer.stream_loss import StreamLost, ending_after_loss, loss_summary
from trainwire.writer.training_events import TrainingEvents
from trainwire.writer.trial_events import TrialEvents
from trainwire.writer.values import MAX_SAFE_INTEGER

__all__ = [
    "UNSET",
    "ErrorLike",
    "RejectedInput",
    "Run",
    "StreamLost",
    "Unset",
    "clean_metrics",
    "error_info",
    "new_run_id",
]

logger = logging.getLogger("trainwire.writer")

#: the `phase.ended` status of a phase still open when the run ends, by the run's status
PHASE_ENDINGS = {"failed": "failed", "interrupted": "interrupted"}
#: the error of a trial still open when the run ends
TRIAL_NOT_ENDED = ("TrialNotEnded", "the run ended before the trial ended")


class Run(TrainingEvents, PhaseEvents, TrialEvents, RunCore):
    """One run's writer: stamps the envelope and writes each event to every sink at once.

    Only global rank 0 writes; on any other rank every method is a no-op. Nothing here
    raises into training once the run is made: a failing sink is logged and dropped, and a
    run whose stream (its file, standard output) lost lines ends `failed` (see `finish`).
    Used as a context manager, the run ends `succeeded`, `failed` (the error is written,
    the exception goes on) or `interrupted` (`RunInterrupted`, `KeyboardInterrupt`).

    Lines go to `<output_dir>/<file_name>` (appended), stdout, `callbacks` and `sinks`.
    `step_interval_s` throttles `train.step` and `phase.progress` (0 writes every one). With
    `heartbeat_interval_s`, `start()` announces it and starts a thread that writes
    `run.heartbeat` when idle; `heartbeat_thread=False` announces it without the thread
    (for a fake clock: the caller writes `heartbeat()` itself). `rank` defaults to
    `global_rank()`; `clock` to the system clock. A bad `run_id` raises `ValueError`.
    With an output directory, `journal` (on by default) keeps the run's journal beside the
    stream (`runs/<run_id>/`): config, dirty diff, environment, notes, summary, the steps
    the throttle left out and a series snapshot (docs/journal.md); `config_reference` (a
    run id, journal or output directory) adds the config's diff against that run's.
    `objective=("eval/loss", "min")` declares the metric the run tries to improve: it is
    written into `run.started`, and the summary's best of that series follows its goal.
    `name` and `tags` (`Run(name="bert-base lr sweep", tags=["baseline"])`) are written
    into `run.started`: `runs`, the dashboard and the exports show them beside the run id.

    Input the contract cannot take is converted where it has one obvious meaning (numpy
    and torch scalars, 0-d tensors, `Decimal`) and otherwise dropped, a field or the
    event, with one WARNING per kind; `strict=True` raises `RejectedInput` instead (for
    tests), and `StreamLost` at the first line the stream could not take. Events before `start()` start the run first; nothing is written after
    `run.finished`.
    """

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
        provenance_fields = provenance_field(provenance, seed, self.output_dir)
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
            self.stop_reason = stop_reason(source, payload["signal"])
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
            self.stop_reason = stop_reason("api", None)
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
        opened), an ending whose exit code would be 0 is `failed` with the error `StreamLost`
        (so `exit_code` is 1), and one ERROR line says how many lines were lost, where and
        why. An interrupted run without `reason` takes the one of its `stop.requested`.
        Paths outside the output directory are left out with a WARNING. `exit_code` is
        a host's own code for the ending (a CLI with codes of its own), written and kept
        as `Run.exit_code` in place of the status's.
        """
        if exit_code is not None:
            exit_code = self._args.optional_int("run.finished", "exit_code", exit_code, -MAX_SAFE_INTEGER)
        if not self._active:  # nothing to write, but the status (and exit code) holds on every rank
            if not self._finished:
                self._exit_code = exit_code
                self._mark_finished(status)
            self._closed = True
            return
        with self._lock:
            if self._finished:
                logger.debug("trainwire: run %s already finished; finish(%r) ignored", self._run_id, status)
                return
            status, error, reason = checked_ending(self._args, status, error, reason, self.stop_reason)
            self._end_what_is_open(status)
            status, error, exit_code = self._ending_after_loss(status, error, exit_code)
            payload = finished_payload(
                self._args,
                self.output_dir,
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
            status, _, exit_code = self._ending_after_loss(status, None, exit_code)  # run.finished itself lost
            self._exit_code = exit_code
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

    def _ending_after_loss(
        self, status: str, error: ErrorLike, exit_code: int | None
    ) -> tuple[str, ErrorLike, int | None]:
        """The ending once the stream's losses are known: a zero-code one becomes `failed`."""
        return ending_after_loss(status, error, exit_code, self._dispatcher.losses, self._dispatcher.dispatched)

    def _say_loss(self) -> None:
        losses = self._dispatcher.losses
        if losses and self._status is not None:
            summary = loss_summary(self._run_id, losses, self._dispatcher.dispatched, self._status, self.exit_code)
            logger.error("%s", summary)

    def finish_for(self, error: BaseException | None) -> None:
        """Finishes as a block that ended with `error` does (`status_for_exception`): an
        interrupted run takes the stop's reason, a failed one the error; a block that ended
        after `stop_for()` is interrupted."""
        if error is None and self._stopped_for is not None:
            self.finish("interrupted", reason=self.stop_reason)
            return
        status, details = ending_for(error, self.stop_reason)
        self.finish(status, **details)

    def close(self) -> None:
        """Stops the heartbeat and closes the sinks (without writing `run.finished`)."""
        self._stop_heartbeat()
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._lines.close()

    def __enter__(self) -> Run:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> Literal[False]:
        self.finish_for(exc)
        self.close()
        return False

    def __repr__(self) -> str:
        return f"Run(run_id={self._run_id!r}, status={self._status!r})"
