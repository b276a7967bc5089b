"""The emitter: `Run` writes one run's events to its sinks, following docs/writer-rules.md.

`Run` is the public face: one method per event, each with its docstring, holding the lock
and the run's state (started, finished, open phases and trials, the stop's reason). The
work is done by the parts beside it: `arguments` (checking and converting what callers
pass), `started`, `payloads` and `ending` (the payloads of `run.started`, of the events
during a run and of `run.finished`, with their fallbacks), `outputs` (the sinks),
`LineWriter` (envelope and sequencing), `StepProgress` (throttle, ETA, attempts; one per
trial), `ThreadScopes` (each thread's trial scope and phase counts), `OpenSpans` (open phases
and trials, their durations) and `Heartbeat` (liveness).

Longer than the writer's other modules because the public API is here, one documented
method per event; `step()` builds its line in place since it is the per-step hot path
(`make bench` holds it to plain `json.dumps` + write).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

from trainwire.contract.clock import Clock, SystemClock
from trainwire.contract.layout import STREAM_FILE
from trainwire.contract.status import EXIT_CODES, status_for_exception, stop_reason
from trainwire.writer.arguments import PHASE_STATUSES, TRIAL_STATUSES, Arguments, checked_run_id, extension_fields
from trainwire.writer.checks import Complaints, RejectedInput
from trainwire.writer.ending import checked_ending, ending_for, finished_payload, required_finished
from trainwire.writer.fields import UNSET, ErrorLike, Unset, clean_metrics, error_info, new_run_id, param_value
from trainwire.writer.heartbeat import Heartbeat
from trainwire.writer.journal import Journal
from trainwire.writer.lines import LineWriter
from trainwire.writer.memory import device_memory
from trainwire.writer.outputs import open_sinks
from trainwire.writer.paths import PathLike, relative_path
from trainwire.writer.payloads import (
    checkpoint_payload,
    eval_payload,
    restart_reason,
    restart_sizes,
    rolled_back_payload,
    stop_payload,
    trial_ended_payload,
)
from trainwire.writer.phase_progress import PhaseCount
from trainwire.writer.rank import global_rank
from trainwire.writer.redaction import redact_config
from trainwire.writer.scopes import PhasePlan, ThreadScopes, TrialOutcome
from trainwire.writer.sinks import Dispatcher, Sink
from trainwire.writer.spans import OpenSpans
from trainwire.writer.started import provenance_field, required_started, started_payload
from trainwire.writer.step_progress import StepProgress
from trainwire.writer.values import BAD, MAX_SAFE_INTEGER, integer

if TYPE_CHECKING:
    from typing_extensions import Unpack  # in typing from Python 3.11

__all__ = ["UNSET", "ErrorLike", "RejectedInput", "Run", "Unset", "clean_metrics", "error_info", "new_run_id"]

logger = logging.getLogger("trainwire.writer")


class Run:
    """One run's writer: stamps the envelope and writes each event to every sink at once.

    Only global rank 0 writes; on any other rank every method is a no-op. Nothing here
    raises into training once the run is made: a failing sink is logged and dropped.
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

    Input the contract cannot take is converted where it has one obvious meaning (numpy
    and torch scalars, 0-d tensors, `Decimal`) and otherwise dropped, a field or the
    event, with one WARNING per kind; `strict=True` raises `RejectedInput` instead (for
    tests). Events before `start()` start the run first; nothing is written after
    `run.finished`.
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
        self._lines = LineWriter(run_id, self._stage, Dispatcher(made), self._now, self._monotonic, self._complain)
        if self._journal is not None:
            self._lines.left_out = self._journal.keep_step  # every step kept, written or not
        self._step_envelope = self._lines.new_line("train.step")  # copied for each step

    # -- properties --------------------------------------------------------------------

    @property
    def run_id(self) -> str:
        return self._run_id

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

    # -- events ------------------------------------------------------------------------

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
    ) -> None:
        """Writes `run.started` and starts the heartbeat thread.

        `provenance=True` collects it (`collect_provenance(seed)`); a mapping is written
        as given; False leaves it out. `resumed_from` is `{run_id, checkpoint, step}`.
        `total_trials` is the number of trials a search plans.
        """
        if not self._active or self._started:
            return
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
        )
        if not self._emit("run.started", payload):
            self._emit("run.started", required_started(payload))
        if self._heartbeat_interval_s is not None and self._heartbeat_thread_enabled:
            self._start_heartbeat()

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
        if not self._active:
            return
        trial = self._trial("phase.started", trial)
        with self._lock:
            if not self._args.phase_name("phase.started", name):
                return
            plan = self._args.optional_int("phase.started", "total", total)
            if unit is not None and not (isinstance(unit, str) and 1 <= len(unit) <= 64):
                self._complain("phase.progress.unit", f"unit {unit!r} is not a name of 1 to 64 characters; left out")
                unit = None
            cycle_fields = self._args.cycle_fields(cycle, total_cycles)
            self._spans.open_phase(name)
            self._scopes.phases.append(
                PhaseCount(name, self._monotonic(), total=plan, unit=unit, trial=trial, cycle=cycle_fields)
            )
            self._emit("phase.started", self._stamped({"phase": name, **cycle_fields}, trial))

    def phase_ended(self, name: str, status: str = "ok", *, trial: int | None = None) -> None:
        """Writes `phase.ended` with the time since the phase started (and its cycle).

        `status` is `ok`, `failed`, `skipped` or `interrupted`.
        """
        if not self._active:
            return
        opened = self._scopes.close_phase(name) if isinstance(name, str) else None
        if trial is None and opened is not None:
            trial = opened.trial
        trial = self._trial("phase.ended", trial)
        with self._lock:
            if not self._args.phase_name("phase.ended", name):
                return
            duration = self._spans.close_phase(name)
            if not self._args.one_of(
                "phase.ended.status", "phase status", status, PHASE_STATUSES, "phase.ended not written"
            ):
                return
            cycle_fields = opened.cycle if opened is not None else {}
            self._emit(
                "phase.ended",
                self._stamped({"phase": name, "status": status, "duration_s": duration, **cycle_fields}, trial),
            )

    @contextlib.contextmanager
    def phase(self, name: str, **plan: Unpack[PhasePlan]) -> Iterator[Run]:
        """A phase around a block: ends `ok`, `failed` when the block raises, `interrupted`
        when it raises `RunInterrupted` or `KeyboardInterrupt`. The exception goes on.
        The keyword arguments (`total`, `unit`, `cycle`, `total_cycles`, `trial`) are
        `phase_started`'s; `advance()` counts inside the block."""
        self.phase_started(name, **plan)
        trial = plan.get("trial")
        try:
            yield self
        except BaseException as error:
            status = status_for_exception(error)
            self.phase_ended(name, "interrupted" if status == "interrupted" else "failed", trial=trial)
            raise
        self.phase_ended(name, "ok", trial=trial)

    def advance(self, n: int = 1) -> None:
        """Counts `n` items done in this thread's innermost open phase; writes
        `phase.progress` unless throttled like steps (the first count and the one that
        reaches the plan are always written). A count past the plan is accepted."""
        if not self._active:
            return
        count = integer(n)
        if not isinstance(count, int):
            self._complain("phase.progress.done", f"advance({n!r}): not an integer >= 0; not counted")
            return
        phases = self._scopes.phases
        if not phases:
            self._complain("phase.progress.phase", "advance() outside an open phase of this thread; not counted")
            return
        with self._lock:
            if (self._finished or not self._started) and not self._ready("phase.progress"):
                return
            opened, now = phases[-1], self._monotonic()
            payload, due = opened.advance(count, now, self._steps.interval_s)
            line = self._lines.new_line("phase.progress")
            line.update(payload)
            if due:
                self._lines.write_fresh(line, opened)
            else:
                self._lines.hold(line, now, opened)

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
        if not self._active:
            return
        if trial is None:
            scopes = self._scopes.trials  # inline: the per-step path
            trial = scopes[-1] if scopes else None
        else:
            trial = self._args.trial("train.step", trial)
        with self._lock:
            if (self._finished or not self._started) and not self._ready("train.step"):
                return
            if type(step) is not int or step < 0:  # the common case costs one check
                checked_step = integer(step)
                if not isinstance(checked_step, int):
                    self._complain("train.step.step", f"step {step!r} is not an integer >= 0; train.step not written")
                    return
                step = checked_step
            now = self._monotonic()
            steps = self._steps if trial is None else self._steps_for(trial)
            self._last_step = step
            if total_steps is not UNSET:
                total = integer(total_steps)
                if total is BAD:
                    self._complain(
                        "train.step.total_steps", f"total_steps={total_steps!r} is not an integer >= 0; ignored"
                    )
                else:
                    steps.total_steps = total
            elapsed, eta, progress, due = steps.report(step, now)
            line = self._step_envelope.copy()
            line["step"] = step
            line["total_steps"] = steps.total_steps
            # plain floats and None (the common case) go straight in
            line["epoch"] = epoch if epoch is None else self._args.number("train.step", "epoch", epoch, 0)
            line["loss"] = (
                loss if loss is None or type(loss) is float else self._args.number("train.step", "loss", loss)
            )
            line["learning_rate"] = (
                learning_rate
                if learning_rate is None or type(learning_rate) is float
                else self._args.number("train.step", "learning_rate", learning_rate)
            )
            if grad_norm is not UNSET:
                line["grad_norm"] = self._args.number("train.step", "grad_norm", grad_norm)
            line["elapsed_s"] = elapsed
            line["eta_s"] = eta
            line["progress"] = progress
            if samples_per_s is not UNSET:
                line["samples_per_s"] = self._args.number("train.step", "samples_per_s", samples_per_s, 0)
            if tokens_per_s is not UNSET:
                line["tokens_per_s"] = self._args.number("train.step", "tokens_per_s", tokens_per_s, 0)
            if tokens_seen is not UNSET:
                line["tokens_seen"] = self._args.optional_int("train.step", "tokens_seen", tokens_seen)
            if metrics is not None:
                line["metrics"] = clean_metrics(metrics, self._complain)
            if memory is not None:
                devices = device_memory(memory, self._complain)
                if devices is not None:
                    line["memory"] = devices
            if trial is not None:
                line["trial"] = trial
            if due:
                self._lines.write_fresh(line, steps)  # the trial's pending step, if any, is superseded
            else:
                self._lines.hold(line, now, steps)

    def epoch(
        self, epoch: int, step: int, metrics: Mapping[str, Any] | None = None, *, trial: int | None = None
    ) -> None:
        """Writes `train.epoch`: epoch `epoch` (from 1) was completed at `step`."""
        counted = self._args.counts("train.epoch", epoch=(epoch, 1), step=(step, 0))
        if counted is not None:
            payload = {**counted, "metrics": clean_metrics(metrics, self._complain)}
            self._emit_active("train.epoch", self._stamped(payload, self._trial("train.epoch", trial)))

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
        if not self._active:
            return
        trial = self._trial("train.restarted", trial)
        with self._lock:
            counted = self._ready("train.restarted") and self._args.counts("train.restarted", step=(step, 0))
            if not counted:
                return
            reason = restart_reason(self._args, reason)
            step = counted["step"]
            self._lines.flush_pending()
            steps = self._steps if trial is None else self._steps_for(trial)
            attempt, previous_step = steps.restart(step)
            self._last_step = step  # the new attempt starts there, as run.finished and the heartbeat say
            payload: dict[str, Any] = {
                "reason": reason,
                "attempt": attempt,
                "previous_step": previous_step,
                "step": step,
            }
            payload.update(restart_sizes(self._args, batch_size_from, batch_size_to))
            if total_steps is not UNSET:
                payload["total_steps"] = steps.total_steps = self._args.optional_int(
                    "train.restarted", "total_steps", total_steps
                )
            self._emit("train.restarted", self._stamped(payload, trial))

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
        if not self._active:
            return
        trial = self._trial("train.rolled_back", trial)
        payload = rolled_back_payload(self._args, self.output_dir, previous_step, step, checkpoint, reason)
        if payload is None:
            return
        with self._lock:
            if not self._ready("train.rolled_back"):
                return
            self._lines.flush_pending()
            (self._steps if trial is None else self._steps_for(trial)).roll_back(payload["step"])
            self._last_step = payload["step"]
            self._emit("train.rolled_back", self._stamped(payload, trial))

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
        payload = eval_payload(self._args, step, metrics, epoch, split)
        if payload is not None:
            self._emit_active("eval.completed", self._stamped(payload, self._trial("eval.completed", trial)))

    def checkpoint(self, step: int, path: PathLike, reason: str = "periodic", *, trial: int | None = None) -> None:
        """Writes `checkpoint.saved`; `path` is made relative to the output directory.

        A path outside the output directory is not written: the event is dropped with
        a WARNING (writer rule 9).
        """
        payload = checkpoint_payload(self._args, self.output_dir, step, path, reason) if self._active else None
        if payload is not None:
            self._emit_active("checkpoint.saved", self._stamped(payload, self._trial("checkpoint.saved", trial)))

    def trial_started(
        self, trial: int, params: Mapping[str, Any] | None = None, attempt: int = 1, *, baseline: bool = False
    ) -> None:
        """Writes `trial.started`; parameter values that are not numbers, strings, booleans
        or None are written as their string form. `baseline=True` marks a baseline
        evaluation before the search's trials. The trial's step bookkeeping starts afresh."""
        counted = self._args.counts("trial.started", trial=(trial, 1), attempt=(attempt, 1)) if self._active else None
        if counted is None:
            return
        trial, attempt = counted["trial"], counted["attempt"]
        with self._lock:
            self._spans.open_trial(trial, attempt)
            self._lines.flush_pending()  # before its bookkeeping is replaced
            self._trial_steps[trial] = StepProgress(self._steps.interval_s, self._steps.total_steps)
            clean = {str(name): param_value(value) for name, value in (params or {}).items()}
            payload: dict[str, Any] = {"trial": trial, "attempt": attempt, "params": clean}
            if baseline:
                payload["baseline"] = True
            self._emit("trial.started", payload)

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
        counted = self._args.counts("trial.ended", trial=(trial, 1), attempt=(attempt, 1)) if self._active else None
        if counted is None:
            return
        if not self._args.one_of(
            "trial.ended.status", "trial status", status, TRIAL_STATUSES, "trial.ended not written"
        ):
            return
        with self._lock:
            duration = self._spans.close_trial(counted["trial"], counted["attempt"])
            self._emit(
                "trial.ended",
                trial_ended_payload(self._args, counted, status, duration, metrics, error, best, accepted),
            )

    @contextlib.contextmanager
    def trial(
        self, number: int, params: Mapping[str, Any] | None = None, attempt: int = 1, *, baseline: bool = False
    ) -> Iterator[TrialOutcome]:
        """A trial around a block, on this thread: `trial.started`, then the trial's number
        on the progress events the thread writes inside, then `trial.ended` with what the
        block set on the `TrialOutcome` it gets. The trial ends `succeeded` (or the
        outcome's `status`), `failed` with the error when the block raises (an
        interruption included: a trial has no interrupted status). The exception goes on."""
        self.trial_started(number, params, attempt, baseline=baseline)
        outcome = TrialOutcome()
        try:
            with self.trial_scope(number):
                yield outcome
        except BaseException as error:
            failed = status_for_exception(error) != "succeeded"
            status = "failed" if failed else outcome.status or "succeeded"
            self._end_trial(number, attempt, status, outcome, error if failed else None)
            raise
        self._end_trial(number, attempt, outcome.status or "succeeded", outcome, None)

    @contextlib.contextmanager
    def trial_scope(self, number: int) -> Iterator[None]:
        """The events this thread writes inside carry trial `number`, and nothing more: no
        `trial.started` or `trial.ended` (for a search whose own callbacks write those)."""
        counted = integer(number, 1)
        self._scopes.trials.append(counted if isinstance(counted, int) else None)
        try:
            yield
        finally:
            self._scopes.trials.pop()

    def _end_trial(
        self, number: int, attempt: int, status: str, outcome: TrialOutcome, error: BaseException | None
    ) -> None:
        self.trial_ended(
            number,
            status,
            attempt=attempt,
            metrics=outcome.metrics,
            error=error,
            best=outcome.best,
            accepted=outcome.accepted,
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

    def heartbeat(self) -> None:
        """Writes `run.heartbeat` with the open phase and the last step (null when none)."""
        if not self._active:
            return
        with self._lock:
            if self._finished:  # a beat racing the end of the run: nothing to say
                return
            self._emit("run.heartbeat", {"phase": self._spans.innermost_phase, "step": self._last_step})

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

        An interrupted run without `reason` takes the one of its `stop.requested`.
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
            self._exit_code = exit_code
            self._mark_finished(status)
        self.close()

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

    # -- paths ---------------------------------------------------------------------------

    def relative_path(self, path: PathLike) -> str | None:
        """`path` relative to the output directory with `/` separators, or None when it is
        outside (or cannot be written as a contract path); see `paths.relative_path`."""
        return relative_path(path, self.output_dir)

    # -- internals ------------------------------------------------------------------------

    def _trial(self, event: str, trial: Any) -> int | None:
        """The trial an event belongs to: `trial` when given, else the thread's trial scope."""
        return self._scopes.trial if trial is None else self._args.trial(event, trial)

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
