"""The emitter: `Run` writes one run's events to its sinks, following docs/writer-rules.md.

`Run` is the public face (one documented method per event), handing the work to collaborators
around one `RunCore`: `TrainingEvents`, `PhaseEvents`, `TrialEvents`, `RunLifetime`."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any

from trainwire.contract.clock import Clock
from trainwire.contract.layout import STREAM_FILE
from trainwire.writer.checks import RejectedInput
from trainwire.writer.fields import UNSET, ErrorLike, Unset, clean_metrics, error_info, new_run_id
from trainwire.writer.paths import PathLike, relative_path
from trainwire.writer.phase_events import PhaseEvents
from trainwire.writer.run_core import RunCore
from trainwire.writer.run_facts import RunFacts
from trainwire.writer.run_lifetime import RunLifetime
from trainwire.writer.run_stop import RunStop, SaveCheckpoint
from trainwire.writer.scopes import PhasePlan, TrialOutcome
from trainwire.writer.sinks import Sink
from trainwire.writer.stop_control import StopControl
from trainwire.writer.stream_loss import StreamLost
from trainwire.writer.training_events import TrainingEvents
from trainwire.writer.trial_events import TrialEvents

if TYPE_CHECKING:
    from typing_extensions import Self, Unpack  # in typing from Python 3.11

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


class Run(RunFacts):
    """One run's writer: stamps the envelope and writes each event to every sink at once.

    Only global rank 0 writes; on any other rank every method is a no-op. Nothing here
    raises into training once the run is made: a failing sink is logged and dropped, and a
    run whose stream (its file, standard output) lost lines ends as its training did, the
    loss said (see `finish`).
    Used as a context manager, the run ends `succeeded`, `failed` (the error is written,
    the exception goes on) or `interrupted` (`RunInterrupted`, `KeyboardInterrupt`).
    The block listens for a stop (`run_stop`, docs/stop.md; `stop=False`: not): the next
    `step()` or `phase()` boundary raises `RunInterrupted`, which the block swallows once
    the run ended `interrupted`; `on_stop(step)` saves the checkpoint to resume from.

    Lines go to `<output_dir>/<file_name>` (appended; `fsync=True` syncs each line to disk),
    stdout (`stdout=True`), `callbacks` (each gets every line as a read-only event) and `sinks`.
    `run_id` defaults to a new one (`new_run_id()`); a bad `run_id` raises `ValueError`.
    `producer` (`{name, version}`) names the program that writes, in `run.started`
    (this package by default); `stage` (`{name, index, count}`) is written in every line's
    envelope, for a run that is one stage of a pipeline.
    `step_interval_s` throttles `train.step` and `phase.progress` (0 writes every one). With
    `heartbeat_interval_s`, `start()` announces it and starts a thread that writes
    `run.heartbeat` when idle; `heartbeat_thread=False` announces it without the thread
    (for a fake clock: the caller writes `heartbeat()` itself). `rank` defaults to
    `global_rank()`; `clock` to the system clock.
    With an output directory, `journal` (on by default) keeps the run's journal beside the
    stream (`runs/<run_id>/`): config, dirty diff, environment, notes, summary, the steps
    the throttle left out and a series snapshot (docs/journal.md); `config_reference` (a
    run id, journal or output directory) adds the config's diff against that run's.
    `objective=("eval/loss", "min")` declares the metric the run tries to improve: it is
    written into `run.started`, and the summary's best of that series follows its goal.
    `name` and `tags` (`Run(name="bert-base lr sweep", tags=["baseline"])`) are written
    into `run.started`: `runs`, the dashboard and the exports show them beside the run id.
    Inside a Kubeflow Trainer TrainJob the run reports its progress to the job's status
    (docs/integrations.md, "Kubeflow Trainer"); `kubeflow=False` turns that off.

    Input the contract cannot take is converted where it has one obvious meaning (numpy
    and torch scalars, 0-d tensors, `Decimal`) and otherwise dropped, a field or the
    event, with one WARNING per kind; `strict=True` raises `RejectedInput` instead (for
    tests), and `StreamLost` at the first line the stream could not take. Events before
    `start()` start the run first; nothing is written after `run.finished`.
    """

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
        kubeflow: bool | None = None,
        stop: bool = True,
        on_stop: SaveCheckpoint | None = None,
    ) -> None:
        self._core = core = RunCore(
            output_dir=output_dir,
            run_id=run_id,
            producer=producer,
            stdout=stdout,
            callbacks=callbacks,
            sinks=sinks,
            file_name=file_name,
            fsync=fsync,
            step_interval_s=step_interval_s,
            heartbeat_interval_s=heartbeat_interval_s,
            heartbeat_thread=heartbeat_thread,
            clock=clock,
            rank=rank,
            stage=stage,
            journal=journal,
            config_reference=config_reference,
            objective=objective,
            name=name,
            tags=tags,
            strict=strict,
            kubeflow=kubeflow,
        )
        self._training = TrainingEvents(core)
        self._phases = PhaseEvents(core)
        self._trials = TrialEvents(core)
        self._lifetime = RunLifetime(core, self._phases, self._trials)
        self._stop = RunStop(self, core.output_dir, enabled=stop and core.active, clock=core.clock, on_stop=on_stop)
        core.stop_channels = self._stop.channels

    def relative_path(self, path: PathLike) -> str | None:
        """`path` relative to the output directory with `/` separators, or None when it is
        outside (or cannot be written as a contract path); see `paths.relative_path`."""
        return relative_path(path, self._core.output_dir)

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
        self._lifetime.start(
            total_steps, total_epochs, config, seed, world_size, resumed_from, provenance, total_trials, name, tags
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
        self._lifetime.stop_requested(source, signal=signal, reason=reason, requested_by=requested_by)

    def stop_for(self, criterion: str, *, requested_by: str | None = None) -> None:
        """Writes `stop.requested` (source `api`) with the stop `criterion` that was met
        (a kill criterion: `loss > 10 after step 500`); the run then ends `interrupted`
        (reason `api`) when its block ends, as after any honoured stop. Stopping the
        training loop is the caller's: this does not raise."""
        self._lifetime.stop_for(criterion, requested_by=requested_by)

    def emit(self, event: str, **fields: Any) -> None:
        """Writes any event as given: extensions (`x_...` fields, new event names).

        An invalid event name, or a field that would overwrite the envelope, is dropped
        with a WARNING.
        """
        self._lifetime.emit(event, fields)

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
        self._lifetime.finish(status, error, reason, metrics, artifacts, checkpoint, exit_code)

    def finish_for(self, error: BaseException | None) -> None:
        """Finishes as a block that ended with `error` does (`status_for_exception`): an
        interrupted run takes the stop's reason, a failed one the error; a block that ended
        after `stop_for()` is interrupted. Goes through `finish()`, so an override sees it."""
        status, details = self._lifetime.ending_for_block(error)
        if status == "interrupted" and self._core.active and not self._core.finished:  # on_stop: rank 0 only
            checkpoint = self._stop.save_checkpoint(self._core.last_step)
            if checkpoint is not None:
                self.checkpoint(self._core.last_step or 0, checkpoint, reason="stop")
                details["checkpoint"] = checkpoint
        self.finish(status, **details)

    def close(self) -> None:
        """Stops the heartbeat and closes the sinks (without writing `run.finished`)."""
        self._lifetime.close()

    def heartbeat(self) -> None:
        """Writes `run.heartbeat` with the open phase and the last step (null when none)."""
        self._core.heartbeat()

    def step(
        self,
        step: int,
        *,
        total_steps: int | None | Unset = UNSET,
        epoch: float | None = None,
        loss: float | None = None,
        learning_rate: float | None = None,
        grad_norm: float | None | Unset = UNSET,
        samples_per_s: float | None | Unset = UNSET,
        tokens_per_s: float | None | Unset = UNSET,
        tokens_seen: int | None | Unset = UNSET,
        metrics: Mapping[str, Any] | None = None,
        memory: Mapping[str, Mapping[str, Any]] | None = None,
        trial: int | None = None,
    ) -> None:
        """Reports a training step; writes `train.step` unless throttled (writer rule 5).

        `total_steps` is kept from `start()` or the last call that gave it. `elapsed_s`,
        `eta_s` and `progress` are derived from the current attempt of the trial (writer
        rule 6). Optional fields left `UNSET` (and `metrics=None`, `memory=None`) are
        omitted; `None` writes null. `memory` is `{device: {allocated_bytes,
        reserved_bytes, peak_bytes}}`; `trial` defaults to the thread's trial scope.
        """
        self._training.step(
            step,
            total_steps=total_steps,
            epoch=epoch,
            loss=loss,
            learning_rate=learning_rate,
            grad_norm=grad_norm,
            samples_per_s=samples_per_s,
            tokens_per_s=tokens_per_s,
            tokens_seen=tokens_seen,
            metrics=metrics,
            memory=memory,
            trial=trial,
        )
        if self._stop.control is not None:  # inside the block: a requested stop raises here
            self._stop.poll()

    def epoch(
        self, epoch: int, step: int, metrics: Mapping[str, Any] | None = None, *, trial: int | None = None
    ) -> None:
        """Writes `train.epoch`: epoch `epoch` (from 1) was completed at `step`."""
        self._training.epoch(epoch, step, metrics, trial=trial)

    def restarted(
        self,
        reason: str = "oom",
        *,
        step: int = 0,
        batch_size_from: int | None | Unset = UNSET,
        batch_size_to: int | None | Unset = UNSET,
        total_steps: int | None | Unset = UNSET,
        trial: int | None = None,
    ) -> None:
        """Writes `train.restarted` (the attempt is counted here, per trial) and starts a new
        attempt: the next step is written at once and the ETA starts over from it."""
        self._training.restarted(
            reason,
            step=step,
            batch_size_from=batch_size_from,
            batch_size_to=batch_size_to,
            total_steps=total_steps,
            trial=trial,
        )

    def rolled_back(
        self,
        previous_step: int,
        step: int,
        *,
        checkpoint: PathLike | None = None,
        reason: str | None = None,
        trial: int | None = None,
    ) -> None:
        """Writes `train.rolled_back`: training went back from `previous_step` to `step`
        (the step `checkpoint` holds) within the same attempt. The next step is written at
        once, `elapsed_s` goes on and the ETA's pace starts over from that step."""
        self._training.rolled_back(previous_step, step, checkpoint=checkpoint, reason=reason, trial=trial)

    def eval(
        self,
        step: int,
        metrics: Mapping[str, Any] | None = None,
        *,
        epoch: float | None = None,
        split: str = "eval",
        trial: int | None = None,
    ) -> None:
        """Writes `eval.completed`."""
        self._training.eval(step, metrics, epoch=epoch, split=split, trial=trial)

    def checkpoint(self, step: int, path: PathLike, reason: str = "periodic", *, trial: int | None = None) -> None:
        """Writes `checkpoint.saved`; `path` is made relative to the output directory.

        A path outside the output directory is not written: the event is dropped with
        a WARNING (writer rule 9).
        """
        self._training.checkpoint(step, path, reason, trial=trial)

    def phase_started(
        self,
        name: str,
        *,
        total: int | None = None,
        unit: str | None = None,
        cycle: int | None = None,
        total_cycles: int | None | Unset = UNSET,
        trial: int | None = None,
    ) -> None:
        """Writes `phase.started`; the phase is open until `phase_ended(name)`.

        `total` and `unit` are the plan `advance()` counts against on this thread; `cycle`
        (from 1) and `total_cycles` place a repeated phase ("cycle 2 of 5") and are written
        on its `phase.ended` too. `trial` defaults to the thread's trial scope.
        """
        self._phases.phase_started(name, total=total, unit=unit, cycle=cycle, total_cycles=total_cycles, trial=trial)

    def phase_ended(self, name: str, status: str = "ok", *, trial: int | None = None) -> None:
        """Writes `phase.ended` with the time since the phase started (and its cycle).

        `status` is `ok`, `failed`, `skipped` or `interrupted`.
        """
        self._phases.phase_ended(name, status, trial=trial)

    @contextlib.contextmanager
    def phase(self, name: str, **plan: Unpack[PhasePlan]) -> Iterator[Self]:
        """A phase around a block: ends `ok`, `failed` when the block raises, `interrupted`
        when it raises `RunInterrupted` or `KeyboardInterrupt`. The exception goes on.
        The keyword arguments (`total`, `unit`, `cycle`, `total_cycles`, `trial`) are
        `phase_started`'s; `advance()` counts inside the block. A stop requested raises
        `RunInterrupted` before the phase starts and after it ends (a phase boundary)."""
        self._stop.poll(force=True)
        with self._phases.phase(name, **plan):
            yield self
        self._stop.poll(force=True)

    def advance(self, n: int = 1) -> None:
        """Counts `n` items done in this thread's innermost open phase; writes
        `phase.progress` unless throttled like steps (the first count and the one that
        reaches the plan are always written). A count past the plan is accepted."""
        self._phases.advance(n)

    def trial_started(
        self, trial: int, params: Mapping[str, Any] | None = None, attempt: int = 1, *, baseline: bool = False
    ) -> None:
        """Writes `trial.started`; parameter values that are not numbers, strings, booleans
        or None are written as their string form. `baseline=True` marks a baseline
        evaluation before the search's trials. The trial's step bookkeeping starts afresh."""
        self._trials.trial_started(trial, params, attempt, baseline=baseline)

    def trial_ended(
        self,
        trial: int,
        status: str,
        *,
        attempt: int = 1,
        metrics: Mapping[str, Any] | None = None,
        error: ErrorLike = None,
        best: Mapping[str, Any] | None = None,
        accepted: bool | None = None,
    ) -> None:
        """Writes `trial.ended` (`succeeded`, `failed`, `pruned`) with the time since
        `trial_started`; `best` is the running best `{trial, metric, value}` after the
        search's decision, `accepted` whether the search kept the trial's result."""
        self._trials.trial_ended(
            trial, status, attempt=attempt, metrics=metrics, error=error, best=best, accepted=accepted
        )

    def adopt_stop_control(self, control: StopControl) -> None:
        """Called by a `StopControl` made with `run=` this run: it decides from then on."""
        self._stop.adopt(control)

    @contextlib.contextmanager
    def trial(
        self, number: int, params: Mapping[str, Any] | None = None, attempt: int = 1, *, baseline: bool = False
    ) -> Iterator[TrialOutcome]:
        """A trial around a block, on this thread: `trial.started`, then the trial's number
        on the progress events the thread writes inside, then `trial.ended` with what the
        block set on the `TrialOutcome` it gets. The trial ends `succeeded` (or the
        outcome's `status`), `failed` with the error when the block raises (an
        interruption included: a trial has no interrupted status). The exception goes on."""
        with self._trials.trial(number, params, attempt, baseline=baseline) as outcome:
            yield outcome

    @contextlib.contextmanager
    def trial_scope(self, number: int, *, opening: Callable[[], object] | None = None) -> Iterator[None]:
        """The events this thread writes inside carry trial `number`, and nothing more: no
        `trial.started` or `trial.ended` (for a search whose own callbacks write those).
        `opening` is called once, before the first event the thread writes inside: a search
        that writes `trial.started` late (Optuna's, once the params are sampled) writes it
        there, so that no event of the trial precedes it."""
        with self._trials.trial_scope(number, opening=opening):
            yield

    def __enter__(self) -> Run:
        self._stop.enter()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool:
        try:
            self.finish_for(exc)
            self.close()
        finally:
            self._stop.exit()
        return self._stop.owns(exc)  # the stop it raised itself ends here

    def __repr__(self) -> str:
        return f"Run(run_id={self._core.run_id!r}, status={self._core.status!r})"
