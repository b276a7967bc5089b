"""Hugging Face transformers integration: a `TrainerCallback` that writes the trainwire stream.

```python
from trainwire.integrations.transformers import attach

callback = attach(trainer)            # owns a Run writing <args.output_dir>/progress.jsonl
trainer.train()
callback.raise_if_stopped()           # a honoured stop skips whatever promotes the model
trainer.save_model()
```

What it maps: `on_train_begin` -> `run.started` (when it owns the run) and `phase.started
train`; a second `on_train_begin` without `on_train_end` (`auto_find_batch_size` after an
out-of-memory error) -> `train.restarted`; `on_log` -> `train.step`; `on_epoch_end` ->
`train.epoch`; `on_evaluate` -> `eval.completed`; `on_save` -> `checkpoint.saved`;
`on_train_end` -> `phase.ended train`. Only world process zero writes; every rank takes part
in the stop decision so that all ranks stop at the same step.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from transformers import TrainerCallback

from trainwire.contract.status import status_for_exception
from trainwire.integrations.distributed import agreed_stop, is_distributed
from trainwire.integrations.hooks import StopOutcome, number, shielded
from trainwire.writer.provenance import ProvenancePrefetch
from trainwire.writer.fields import UNSET
from trainwire.writer.run import Run
from trainwire.stop import StopControl, StopRequest

if TYPE_CHECKING:
    from transformers import Trainer, TrainerControl, TrainerState, TrainingArguments

__all__ = ["CHECKPOINT_ORIGIN_FILE", "TrainwireCallback", "attach", "checkpoint_origin"]

logger = logging.getLogger("trainwire.integrations.transformers")

#: written into every checkpoint directory so that a resumed run knows where it came from
CHECKPOINT_ORIGIN_FILE = "trainwire.json"
_CHECKPOINT_DIR = re.compile(r"^checkpoint-(\d+)$")
_WRAPPED_MARK = "__trainwire_wrapped__"

# Log keys that have their own `train.step` field; every other number goes to `metrics`.
_STEP_FIELDS = {
    "loss": "loss",
    "learning_rate": "learning_rate",
    "grad_norm": "grad_norm",
    "num_input_tokens_seen": "tokens_seen",
    "train_tokens_per_second": "tokens_per_s",
    "train_samples_per_second": "samples_per_s",
}
_NOT_METRICS = frozenset({"epoch", "step"})
_NOT_STEP_METRICS = _NOT_METRICS | frozenset(_STEP_FIELDS)


def _metrics(values: Mapping[str, Any], *, skip: frozenset[str], prefix: str = "") -> dict[str, Any]:
    """The entries of a log or metrics dict not in `skip`, keys without `prefix` (the run drops non-numbers)."""
    return {key.removeprefix(prefix): value for key, value in values.items() if key not in skip}


def checkpoint_origin(checkpoint_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """The `run.started.resumed_from` object for a resume from `checkpoint_dir`.

    The run id comes from the `trainwire.json` this integration writes on save (null when
    absent); the step from that file or the directory's `checkpoint-N` name. The run makes
    the checkpoint path relative to its output directory.
    """
    directory = Path(checkpoint_dir).absolute()
    origin: dict[str, Any] = {}
    try:
        loaded = json.loads((directory / CHECKPOINT_ORIGIN_FILE).read_text(encoding="utf-8"))
        origin = loaded if isinstance(loaded, dict) else {}
    except (OSError, ValueError):
        pass
    step = origin.get("step")
    if not isinstance(step, int):
        match = _CHECKPOINT_DIR.match(directory.name)
        step = int(match.group(1)) if match else None
    run_id = origin.get("run_id")
    return {"run_id": run_id if isinstance(run_id, str) else None, "checkpoint": str(directory), "step": step}


class TrainwireCallback(TrainerCallback, StopOutcome):
    """Writes a `Trainer`'s progress to a trainwire `Run` and honours cooperative stops.

    Prefer `attach()`, which also wraps `trainer.train` so that a training that raises ends
    the train phase (and an owned run) as failed. The same callback can be attached again
    after the trainer's callback list was reset or the trainer rebuilt: the stream goes on.
    """

    def __init__(
        self,
        run: Run | None,
        *,
        stop: StopControl | None = None,
        owns_run: bool = False,
        sync_every_steps: int = 1,
    ) -> None:
        #: None on ranks other than world process zero when the callback made the run
        self.run = run
        #: the stop control polled at step ends, evaluations and logs (None: stops are not watched)
        self.stop = stop
        self.owns_run = owns_run
        # Every rank reduces the stop flag on the same steps: a fixed cadence, never a clock.
        self.sync_every_steps = max(1, sync_every_steps)
        self._stop_request: StopRequest | None = None
        self._in_train = False  # between on_train_begin and on_train_end of one train() call
        self._train_phase_open = False
        self._batch_size: int | None = None
        self._last_loss: float | None = None
        self._resume_checkpoint: str | None = None
        self._failed_hooks: set[str] = set()
        self._owns_signals = False
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
        _wrap_train(trainer)
        return self

    # -- transformers hooks -------------------------------------------------------------

    @shielded
    def on_train_begin(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        restarted_in_place = self._in_train
        self._in_train = True
        run = self._writer(state)
        if run is None:
            self._batch_size = state.train_batch_size
            return
        if not run.started:
            # An owned run starts here; so does a caller's run that was not started yet, so
            # that the stream always opens with run.started.
            self._start_run(run, args, state)
        elif restarted_in_place or (run.last_step is not None and state.global_step < run.last_step):
            # An OOM batch-size retry (no on_train_end in between) or a new train() from an
            # earlier step: announce it before the step counter goes back.
            sizes = {"batch_size_from": self._batch_size, "batch_size_to": state.train_batch_size}
            run.restarted(
                "oom" if restarted_in_place else "other",
                step=state.global_step,
                total_steps=state.max_steps,
                **{name: size for name, size in sizes.items() if size is not None},
            )
        self._batch_size = state.train_batch_size
        if not self._train_phase_open:
            run.phase_started("train")
            self._train_phase_open = True

    def on_step_end(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any) -> None:
        if self.stop is None or self._stop_request is not None:
            return
        if is_distributed():
            # Every rank reaches this line at the same steps; the reduce shares rank 0's file.
            if state.global_step % self.sync_every_steps:
                return
        found = agreed_stop(self.stop)
        if found is not None:
            self._begin_stop(control, found)

    @shielded
    def on_log(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        logs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        self._poll_stop(control)
        run = self._writer(state)
        # Eval logs and the final train summary carry no `loss`: they are not steps.
        if run is None or not logs or number(logs.get("loss")) is None:
            return
        fields: dict[str, Any] = {name: number(logs[key]) for key, name in _STEP_FIELDS.items() if key in logs}
        epoch = number(logs.get("epoch", state.epoch))
        # Anything else the trainer logs at a step (custom values) travels as metrics.
        metrics = _metrics(logs, skip=_NOT_STEP_METRICS)
        if metrics:
            fields["metrics"] = metrics
        self._last_loss = fields.get("loss")
        run.step(state.global_step, total_steps=state.max_steps, epoch=epoch, **fields)

    @shielded
    def on_epoch_end(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        run = self._writer(state)
        epoch = state.epoch or 0.0
        # A stop mid-epoch still fires on_epoch_end: only a completed epoch is an event.
        if run is None or epoch < 1 or not math.isclose(epoch, round(epoch), abs_tol=1e-6):
            return
        metrics = {"loss": self._last_loss} if self._last_loss is not None else {}
        run.epoch(round(epoch), state.global_step, metrics=metrics)

    @shielded
    def on_evaluate(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        metrics: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        run = self._writer(state)
        if run is not None and metrics is not None:
            run.eval(state.global_step, _metrics(metrics, skip=_NOT_METRICS, prefix="eval_"), epoch=state.epoch)
        self._poll_stop(control)

    @shielded
    def on_save(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any) -> None:
        run = self._writer(state)
        if run is None:
            return
        directory = Path(args.output_dir) / f"checkpoint-{state.global_step}"
        self._write_origin(run, directory, state.global_step)
        run.checkpoint(state.global_step, str(directory.absolute()), "stop" if self.stopped else "periodic")

    @shielded
    def on_train_end(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        self._in_train = False
        run = self._writer(state)
        if run is not None:
            self._close_train_phase("interrupted" if self.stopped else "ok")
            if self.owns_run and run.status is None:
                if self._stop_request is not None:
                    run.finish("interrupted", reason=self._stop_request.finish_reason)
                else:
                    run.finish("succeeded")
        self._release_signals()

    # -- called by the train() wrapper ----------------------------------------------------

    def _before_train(self, trainer: Trainer, resume_from_checkpoint: str | bool | None) -> None:
        self._in_train = False
        self._resume_checkpoint = _resolve_checkpoint(trainer, resume_from_checkpoint)

    def _train_failed(self, error: BaseException) -> None:
        self._in_train = False
        self._release_signals()
        run = self.run
        if run is None or run.status is not None:
            return
        interrupted = status_for_exception(error) == "interrupted"
        self._close_train_phase("interrupted" if interrupted else "failed")
        if not self.owns_run:
            return  # the caller's Run (or its `with` block) records how the run ended
        run.finish_for(error)

    def _release_signals(self) -> None:
        # Handlers installed by attach() for an owned run end with it: a later Ctrl+C
        # must not be swallowed as a stop request nobody polls.
        if self._owns_signals and self.stop is not None:
            self.stop.uninstall()
        self._owns_signals = False

    # -- internals ------------------------------------------------------------------------

    def _writer(self, state: TrainerState) -> Run | None:
        """The run to write to, or None on ranks other than world process zero."""
        return self.run if state.is_world_process_zero and self.run is not None else None

    def _start_run(self, run: Run, args: TrainingArguments, state: TrainerState) -> None:
        resumed_from: Any = UNSET
        if state.global_step > 0:
            # Without the train() wrapper, the checkpoint is the one named after the step.
            checkpoint = self._resume_checkpoint or Path(args.output_dir) / f"checkpoint-{state.global_step}"
            resumed_from = checkpoint_origin(checkpoint)
        run.start(
            total_steps=state.max_steps,
            total_epochs=args.num_train_epochs if args.max_steps <= 0 else UNSET,
            config=args.to_dict(),
            seed=args.seed,
            world_size=args.world_size,
            resumed_from=resumed_from,
            provenance=(self._provenance and self._provenance.result(args.seed)) or True,
        )

    def _close_train_phase(self, status: str) -> None:
        if self._train_phase_open and self.run is not None:
            self.run.phase_ended("train", status=status)
        self._train_phase_open = False

    def _poll_stop(self, control: TrainerControl) -> None:
        # Between step ends a stop is decided here only in a single process: in a
        # distributed job it waits for the next on_step_end, where all ranks agree.
        if self.stop is None or self._stop_request is not None or is_distributed():
            return
        found = self.stop.check()
        if found is not None:
            self._begin_stop(control, found)

    def _begin_stop(self, control: TrainerControl, found: StopRequest) -> None:
        self._stop_request = found
        # DefaultFlowCallback does not save on a stop: ask for the checkpoint and the last log.
        control.should_save = True
        control.should_log = True
        control.should_training_stop = True

    def _write_origin(self, run: Run, directory: Path, step: int) -> None:
        if not directory.is_dir():
            return
        try:
            (directory / CHECKPOINT_ORIGIN_FILE).write_text(
                json.dumps({"run_id": run.run_id, "step": step}), encoding="utf-8"
            )
        except OSError as error:
            logger.warning("could not write %s into %s: %s", CHECKPOINT_ORIGIN_FILE, directory, error)


def _resolve_checkpoint(trainer: Trainer, resume_from_checkpoint: str | bool | None) -> str | None:
    if resume_from_checkpoint is True:
        from transformers.trainer_utils import get_last_checkpoint

        return get_last_checkpoint(trainer.args.output_dir)
    return str(resume_from_checkpoint) if resume_from_checkpoint else None


def _current_callback(trainer: Trainer) -> TrainwireCallback | None:
    return next((cb for cb in trainer.callback_handler.callbacks if isinstance(cb, TrainwireCallback)), None)


def _wrap_train(trainer: Trainer) -> None:
    """Wrap `trainer.train` (once) so that the attached callback sees how it ends."""
    original: Callable[..., Any] = trainer.train
    if getattr(original, _WRAPPED_MARK, False):
        return

    @functools.wraps(original)
    def train(resume_from_checkpoint: str | bool | None = None, *args: Any, **kwargs: Any) -> Any:
        # Looked up per call: the callback may have been replaced since the wrap.
        callback = _current_callback(trainer)
        if callback is not None:
            callback._before_train(trainer, resume_from_checkpoint)
        try:
            return original(resume_from_checkpoint, *args, **kwargs)
        except BaseException as error:
            if callback is not None:
                callback._train_failed(error)
            raise

    setattr(train, _WRAPPED_MARK, True)
    trainer.train = train  # type: ignore[method-assign]


def attach(
    trainer: Trainer,
    run: Run | None = None,
    *,
    output_dir: str | os.PathLike[str] | None = None,
    stop: bool | StopControl = True,
    signals: bool = False,
    check_interval_s: float = 0.25,
    sync_every_steps: int = 1,
    callback: TrainwireCallback | None = None,
    **run_options: Any,
) -> TrainwireCallback:
    """Make `trainer` write the trainwire stream; returns the callback.

    Without `run`, the callback owns one: a `Run(output_dir or args.output_dir, **run_options)`
    started at `on_train_begin` and finished when training ends. With `stop=True` the control
    file in the run's output directory is watched (a `StopControl` may be passed instead);
    `signals=True` also maps SIGINT/SIGTERM to a graceful stop (main thread only; for an owned
    run the handlers are removed when training ends). Pass `callback=` to re-attach an
    existing callback to a rebuilt trainer.
    """
    if callback is not None:
        return callback.attach(trainer)
    zero = trainer.is_world_process_zero()
    owns_run = run is None
    if run is None and zero:
        run = Run(output_dir if output_dir is not None else trainer.args.output_dir, **run_options)
    control: StopControl | None
    if isinstance(stop, StopControl):
        control = stop
    elif stop:
        # Only rank 0 watches (and clears) the file; the others learn of it through the reduce.
        watched = None
        if zero:
            watched = (run.output_dir if run is not None else None) or output_dir or trainer.args.output_dir
        control = StopControl(watched, run=run if zero else None, check_interval_s=check_interval_s)
    else:
        control = None
    created = TrainwireCallback(
        run if zero else None, stop=control, owns_run=owns_run, sync_every_steps=sync_every_steps
    )
    if signals and control is not None:
        control.install_signal_handlers()
        created._owns_signals = owns_run
    return created.attach(trainer)
