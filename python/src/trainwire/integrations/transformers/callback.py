"""The transformers `TrainerCallback` behind `trainwire.integrations.transformers`: one
documented hook per `TrainerCallback` event, writing what each event means into the run, and
the hooks the trainer wrappers call (a `train()` that begins or raises, a search, an
`evaluate()` or `predict()` outside training). The run's lifecycle (ownership, stop,
restarts, the train phase) is `integrations.core.lifecycle`; what the Trainer's logs mean
is `logs`; `attach()`, the door, is in the package's `__init__`.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from transformers import TrainerCallback

from trainwire.contract.status import status_for_exception
from trainwire.integrations.core.hooks import number, shielded
from trainwire.integrations.core.lifecycle import Lifecycle, LifecycleAdapter, owned_run, watched_stop
from trainwire.integrations.core.loop_progress import LoopProgress, planned_batches
from trainwire.integrations.core.memory_probe import step_memory
from trainwire.integrations.transformers.checkpoint_origins import (
    checkpoint_origin,
    resolve_checkpoint,
    write_checkpoint_origin,
)
from trainwire.integrations.transformers.held_step import HeldStep
from trainwire.integrations.transformers.kubeflow import kubeflow_callback_stands_down
from trainwire.integrations.transformers.logs import (
    NOT_METRICS,
    NOT_STEP_METRICS,
    STEP_FIELDS,
    logs_at_epoch_end,
    metrics_of,
    scheduler_learning_rate,
)
from trainwire.integrations.transformers.wrapper import calling_trainer, wrap_trainer
from trainwire.stop import StopControl, StopRequest
from trainwire.writer.fields import UNSET
from trainwire.writer.provenance import ProvenancePrefetch
from trainwire.writer.run import Run

if TYPE_CHECKING:
    from transformers import Trainer, TrainerControl, TrainerState, TrainingArguments

    from trainwire.integrations.transformers.optuna_trials import SearchTrials

__all__ = ["TrainwireCallback"]

# the integration's one logger name, whichever of its modules warns
logger = logging.getLogger("trainwire.integrations.transformers")


class TrainwireCallback(TrainerCallback, LifecycleAdapter):  # type: ignore[misc]
    """Writes a `Trainer`'s progress to a trainwire `Run` and honours cooperative stops.

    Prefer `attach()`, which also wraps `trainer.train` so that a training that raises ends
    the train phase (and an owned run) as failed. The same callback can be attached again
    after the trainer's callback list was reset or the trainer rebuilt: the stream goes on.
    With `signals=True` the stop's signal handlers are installed at `on_train_begin` and
    removed at `on_train_end`: outside the loop, signals do what they did before.
    `new_run` makes the next owned run once the current one finished (see `attach`). The
    run's lifecycle (ownership, stop, restarts, the train phase) is `self.lifecycle`; the
    hooks below map the Trainer's events onto it and write what each event means.
    """

    def __init__(
        self,
        run: Run | None = None,
        *,
        stop: StopControl | None = None,
        owns_run: bool | None = None,
        sync_every_steps: int = 1,
        signals: bool = False,
        new_run: Callable[[], Run] | None = None,
    ) -> None:
        # Made with no run and no say on ownership (`Trainer(callbacks=[TrainwireCallback])`,
        # which transformers instantiates with no arguments): the callback owns a run as
        # `attach()` makes it, once the trainer's arguments are known (`_adopt`).
        self._adopts = run is None and owns_run is None and stop is None
        self.lifecycle = Lifecycle(
            run,
            stop=stop,
            owns_run=bool(owns_run) or self._adopts,
            sync_every_steps=sync_every_steps,
            signals=signals,
            new_run=new_run,
            flush=self._write_held,
            renewed=self._forget_run,
        )
        self._batch_size: int | None = None
        self._last_loss: float | None = None
        self._step_learning_rate: float | None = None
        self._held = HeldStep()
        self._loop = LoopProgress()
        self._loop_phase = "eval"  # set by the wrapper of evaluate() and predict()
        self._resume_checkpoint: str | None = None
        self._failed_hooks: set[str] = set()
        self._warned_absent = False
        self._search: SearchTrials | None = None  # the open trial of a hyperparameter_search
        self._trial_dir: Callable[[], str] | None = None  # where the Trainer saves the trial's checkpoints
        # git and package versions, gathered while the trainer sets up rather than in train()
        self._provenance = ProvenancePrefetch() if owns_run and run is not None else None

    # -- public -------------------------------------------------------------------------

    def attach(self, trainer: Trainer) -> TrainwireCallback:
        """Add this callback to `trainer` (replacing any other trainwire callback); idempotent."""
        handler = trainer.callback_handler
        for other in [cb for cb in handler.callbacks if isinstance(cb, TrainwireCallback) and cb is not self]:
            handler.remove_callback(other)
        if self not in handler.callbacks:
            handler.add_callback(self)
        wrap_trainer(trainer, self)
        return self

    @property
    def stop_checkpoint(self) -> Path | None:
        """The checkpoint saved because of the honoured stop (for `run.finish(checkpoint=...)`)."""
        checkpoint = self.lifecycle.stop_checkpoint
        return checkpoint if isinstance(checkpoint, Path) else None  # on_save sets a Path

    # -- transformers hooks -------------------------------------------------------------

    @shielded
    def on_init_end(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any) -> None:
        self._adopt(args, state)

    @shielded
    def on_train_begin(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        self._adopt(args, state)
        if self._search is not None and state.is_world_process_zero:
            self._search.announce()  # before the trial's train phase
        # An OOM batch-size retry calls on_train_begin again, without on_train_end.
        sizes = {"batch_size_from": self._batch_size, "batch_size_to": state.train_batch_size}
        self.lifecycle.begin_train(
            state.global_step,
            total_steps=state.max_steps,
            start=lambda run: self._start_run(run, args, state),
            writes=state.is_world_process_zero,
            **{name: size for name, size in sizes.items() if size is not None},
        )
        self._batch_size = state.train_batch_size

    @shielded
    def on_step_begin(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        self._held.write(self._writer(state), loss=self._last_loss)

    @shielded
    def on_epoch_begin(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        self._held.write(self._writer(state), loss=self._last_loss)

    @shielded
    def on_optimizer_step(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        # The rate this step used: the scheduler steps between here and on_step_end.
        self._step_learning_rate = scheduler_learning_rate(kwargs)

    def on_step_end(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any) -> None:
        # First, on every rank: a stop asks for a log of this step.
        self._ask_to_stop(control, self.lifecycle.decide_stop(state.global_step))
        self._report_step(args, state, control, **kwargs)

    @shielded
    def on_log(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        logs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        self._ask_to_stop(control, self.lifecycle.poll_stop())
        run = self._writer(state)
        # Eval logs and the final train summary carry no `loss`: they are not steps.
        if run is None or not logs or number(logs.get("loss")) is None:
            return
        fields: dict[str, Any] = {name: number(logs[key]) for key, name in STEP_FIELDS.items() if key in logs}
        fields["step"] = state.global_step
        fields["total_steps"] = state.max_steps
        fields["epoch"] = number(logs.get("epoch", state.epoch))
        # Anything else the trainer logs at a step (custom values) travels as metrics.
        metrics = metrics_of(logs, skip=NOT_STEP_METRICS)
        if metrics:
            fields["metrics"] = metrics
        self._last_loss = fields.get("loss")
        if self._held.step not in (None, state.global_step):
            self._held.write(run)
        self._held.write(run, fields, loss=self._last_loss)

    @shielded
    def on_epoch_end(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        run = self._writer(state)
        if run is None:
            return
        epoch = state.epoch or 0.0
        # A stop mid-epoch still fires on_epoch_end: only a completed epoch is an event.
        completed = epoch >= 1 and math.isclose(epoch, round(epoch), abs_tol=1e-6)
        if self._held.step is not None and control.should_log:
            # The epoch's log of the held step follows: the epoch waits behind that step.
            if completed:
                self._held.hold_epoch(round(epoch), state.global_step)
            return
        self._held.write(run, loss=self._last_loss)
        if completed:
            run.epoch(
                round(epoch),
                state.global_step,
                metrics={"loss": self._last_loss} if self._last_loss is not None else {},
            )

    @shielded
    def on_evaluate(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        metrics: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        self._adopt(args, state)
        if self._outside_training():
            self._end_loop_run(args, state, metrics)
            return
        run = self._writer(state)
        if run is not None and metrics is not None:
            if not run.started:
                self._start_run(run, args, state)
            run.eval(state.global_step, metrics_of(metrics, skip=NOT_METRICS, prefix="eval_"), epoch=state.epoch)
        self._loop.end()
        self._ask_to_stop(control, self.lifecycle.poll_stop())

    @shielded
    def on_prediction_step(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        self._adopt(args, state)
        if not self._loop.is_open and self._outside_training():
            self._open_loop_run(args, state)
        run = self._writer(state)
        if run is None or run.status is not None:
            return
        if not run.started:
            self._start_run(run, args, state)
        self._loop.batch_done(run, self._loop_phase, planned_batches(kwargs.get("eval_dataloader")))

    @shielded
    def on_predict(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        metrics: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if self._outside_training():
            self._end_loop_run(args, state, None)
        else:
            self._loop.end()

    @shielded
    def on_save(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any) -> None:
        output_dir = self._trial_dir() if self._trial_dir is not None else args.output_dir
        directory = Path(output_dir).absolute() / f"checkpoint-{state.global_step}"
        if self.stopped:
            self.lifecycle.stop_checkpoint = directory
        run = self._writer(state)
        if run is None:
            return
        write_checkpoint_origin(directory, run.run_id, state.global_step)
        run.checkpoint(state.global_step, str(directory), "stop" if self.stopped else "periodic")

    @shielded
    def on_train_end(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        # A signal or file that came after the last step end is honoured, not dropped.
        self._ask_to_stop(control, self.lifecycle.poll_stop())
        self.lifecycle.end_train(writes=state.is_world_process_zero)
        self.lifecycle.finish(writes=state.is_world_process_zero)

    # -- called by the trainer wrappers ---------------------------------------------------

    def _before_train(self, trainer: Trainer, resume_from_checkpoint: str | bool | None, trial: Any = None) -> None:
        self.lifecycle.in_train = False  # a train() call begins: not a retry in place
        kubeflow_callback_stands_down(trainer, self.run)  # one reporter per TrainJob
        self._resume_checkpoint = resolve_checkpoint(trainer, resume_from_checkpoint)
        if self._search is not None and trial is not None:
            self._search.begin(trial)
            # The Trainer saves a trial's checkpoints in its own folder (`run-<number>` or hp_name's).
            self._trial_dir = lambda: trainer._get_output_dir(trial)

    def _train_failed(self, error: BaseException) -> None:
        # No TrainerCallback hook sees an exception: the train() wrapper reports it here.
        self.lifecycle.fail(error)
        if self._search is not None:
            self._search.fail(error)

    def _search_begins(self, trainer: Trainer, n_trials: int, *, follows_trials: bool = True) -> Run | None:
        # A search: one run, each trial a trial of it, followed here (Optuna's backend) or by
        # a TuneSearch on the driver (Ray's trials train in Tune's workers).
        self.lifecycle.begin_search()
        kubeflow_callback_stands_down(trainer, self.run)  # before Tune copies the Trainer to its workers
        run = self._writer(trainer.state)
        if run is not None:
            self._start_run(run, trainer.args, trainer.state, resumed=False, total_trials=n_trials)
        if run is not None and follows_trials:
            from trainwire.integrations.transformers.optuna_trials import SearchTrials  # optuna stays optional

            self._search = SearchTrials(run)
        return run

    def _search_ended(self, error: BaseException | None) -> None:
        if self._search is not None:
            self._search.end()
        self._search, self._trial_dir = None, None
        self.lifecycle.end_search(error, writes=self.run is not None)

    def _loop_begins(self, phase: str) -> None:
        self._loop_phase = phase

    def _loop_failed(self, error: BaseException) -> None:
        # An evaluate() or predict() that raised: its phase ends, and so does a run of its own.
        self._loop.end("interrupted" if status_for_exception(error) == "interrupted" else "failed")
        if self._outside_training():
            self.lifecycle.fail(error)

    def _warn_absent(self) -> None:
        if self._warned_absent:
            return
        self._warned_absent = True
        logger.warning(
            "trainwire: the attached callback is not in trainer.callback_handler.callbacks; this training "
            "is not written and signals keep their usual handlers (re-attach: attach(trainer, callback=...))"
        )

    # -- internals ------------------------------------------------------------------------

    def _adopt(self, args: TrainingArguments, state: TrainerState) -> None:
        """A callback made with no arguments takes the run `attach()` would make: its own,
        writing `<args.output_dir>/progress.jsonl` on world process zero, the control file
        there watched; and it wraps the trainer that made it (when found) as `attach()` does."""
        if not self._adopts:
            return
        self._adopts = False
        trainer = calling_trainer(self)
        callbacks = trainer.callback_handler.callbacks if trainer is not None else []
        first = next((cb for cb in callbacks if isinstance(cb, TrainwireCallback)), None)
        if first is not None and first is not self:
            # `callbacks=[TrainwireCallback, TrainwireCallback]`: two runs would interleave in one file.
            logger.warning("trainwire: a second TrainwireCallback in one Trainer writes nothing; pass one")
            self.lifecycle.owns_run = False
            return
        zero = state.is_world_process_zero
        lifecycle = self.lifecycle
        if zero:
            lifecycle.run, lifecycle.new_run = owned_run(args.output_dir)
            self._provenance = ProvenancePrefetch()
        lifecycle.stop = watched_stop(lifecycle.run, zero=zero, directory=args.output_dir)
        if trainer is not None:
            wrap_trainer(trainer, self)

    def _writer(self, state: TrainerState) -> Run | None:
        """The run to write to, or None on ranks other than world process zero."""
        return self.run if state.is_world_process_zero and self.run is not None else None

    def _write_held(self, run: Run) -> None:
        self._held.write(run, loss=self._last_loss)

    def _forget_run(self) -> None:
        """A new owned run begins (after the last one ended): nothing of the old one carries over."""
        self._last_loss = None
        if self.run is not None and self.lifecycle.new_run is not None:
            self._provenance = ProvenancePrefetch()

    def _outside_training(self) -> bool:
        """An `evaluate()` or `predict()` outside `train()` with an owned run: a run of its own."""
        return not self.lifecycle.in_train and self.owns_run and not self.lifecycle.searching

    def _open_loop_run(self, args: TrainingArguments, state: TrainerState) -> None:
        """The run of a loop outside training begins (a new one when the last one ended)."""
        self.lifecycle.renew()
        run = self._writer(state)
        if run is not None and run.status is None and not run.started:
            self._start_run(run, args, state, resumed=False)

    def _end_loop_run(self, args: TrainingArguments, state: TrainerState, metrics: dict[str, Any] | None) -> None:
        """The loop outside training ended: its results, its phase, then its run."""
        if not self._loop.is_open:
            self._open_loop_run(args, state)  # no batch came (an empty loader)
        run = self._writer(state)
        writes = run is not None and run.status is None
        if run is not None and writes:
            self._loop.ensure_open(run, self._loop_phase)
            if metrics is not None:
                run.eval(state.global_step, metrics_of(metrics, skip=NOT_METRICS, prefix="eval_"), epoch=state.epoch)
        self._loop.end()
        self.lifecycle.finish(writes=writes)

    def _start_run(
        self, run: Run, args: TrainingArguments, state: TrainerState, *, resumed: bool = True, total_trials: Any = UNSET
    ) -> None:
        resumed_from: Any = UNSET
        if resumed and state.global_step > 0:
            # Without the train() wrapper, the checkpoint is the one named after the step.
            checkpoint = self._resume_checkpoint or Path(args.output_dir) / f"checkpoint-{state.global_step}"
            resumed_from = checkpoint_origin(checkpoint)
        run.start(
            total_steps=state.max_steps if resumed else None,
            total_epochs=args.num_train_epochs if args.max_steps <= 0 else UNSET,
            config=args.to_dict(),
            seed=args.seed,
            world_size=args.world_size,
            resumed_from=resumed_from,
            provenance=(self._provenance and self._provenance.result(args.seed)) or True,
            total_trials=total_trials,
        )

    @shielded
    def _report_step(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        learning_rate = (
            self._step_learning_rate if self._step_learning_rate is not None else scheduler_learning_rate(kwargs)
        )
        self._step_learning_rate = None
        run = self._writer(state)
        if run is None:
            return
        self._held.write(run, loss=self._last_loss)
        fields: dict[str, Any] = {
            "step": state.global_step,
            "total_steps": state.max_steps,
            "epoch": number(state.epoch),
            "learning_rate": learning_rate,
        }
        memory = step_memory()
        if memory is not None:
            fields["memory"] = memory
        if control.should_log or logs_at_epoch_end(args):
            self._held.hold(fields)  # written by on_log with the loss, or before the next event
        else:
            run.step(**fields)

    def _ask_to_stop(self, control: TrainerControl, found: StopRequest | None) -> None:
        if found is None:
            return
        if self._search is not None:
            self._search.stop_study()
        # DefaultFlowCallback does not save on a stop: ask for the checkpoint and the last log.
        control.should_save = True
        control.should_log = True
        control.should_training_stop = True
