"""Accelerate's tracker door: `Accelerator(log_with=[TrainwireTracker(...)])`.

```python
tracker = TrainwireTracker("runs/exp-1", signals=True)
accelerator = Accelerator(log_with=[tracker])
accelerator.init_trackers("exp-1", config=vars(options),  # run.started: the config, name exp-1
                          init_kwargs={"trainwire": {"tags": ["baseline"]}})
for step in range(1, steps + 1):
    ...
    accelerator.log({"loss": loss.item(), "lr": lr}, step=step)   # train.step
    if tracker.decide_stop(step):                          # every rank, every step
        accelerator.save_state(path)
        tracker.checkpoint(step, path)
        break
accelerator.end_training()                                 # run.finished
```

`log(values, step)` splits `values` by the documented prefix rule (`EVAL_PREFIXES`): keys
starting `eval/` or `eval_` are an `eval.completed` of split `eval`, `val/` or `val_` of
split `validation`, `test/` or `test_` of split `test` (prefix taken off); the rest is a
`train.step`, with `loss` (or `train/loss`, `train_loss`) and `lr` (or `learning_rate`) in
their own fields, and each step carries `memory` (CUDA devices in use, else the process's
peak resident memory). A tracker sees only what `log` is given, never a loop's batches, so
per-item progress of an evaluation is the loop's to write: `tracker.run` (None off the main
process) takes `phase_started("eval", total=len(loader), unit="batches")`, `advance()` per
batch and `phase_ended("eval")`. Accelerate calls a tracker on the main process only; the stop is decided on
every rank by `decide_stop`, the lifecycle core's collective. The tracker is not a loop
integration: the loop stays the user's, and the tracker only reports it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

from trainwire.extras import require_extra

require_extra(
    "transformers", "accelerate"
)  # `pip install 'trainwire[transformers]'` named, in place of a bare ImportError

from accelerate.state import PartialState  # noqa: E402
from accelerate.tracking import GeneralTracker  # noqa: E402

from trainwire.integrations.core.hooks import number  # noqa: E402
from trainwire.integrations.core.lifecycle import Lifecycle, LifecycleAdapter, chosen_stop, owned_run  # noqa: E402
from trainwire.integrations.core.memory_probe import step_memory  # noqa: E402
from trainwire.stop import StopControl, StopRequest  # noqa: E402
from trainwire.writer.run import Run  # noqa: E402

__all__ = ["EVAL_PREFIXES", "TrainwireTracker"]

#: the prefixes of `accelerator.log` keys that are evaluation values, and their split
EVAL_PREFIXES: dict[str, str] = {
    "eval/": "eval",
    "eval_": "eval",
    "val/": "validation",
    "val_": "validation",
    "test/": "test",
    "test_": "test",
}
_LOSS_KEYS = ("loss", "train/loss", "train_loss")
_LEARNING_RATE_KEYS = ("lr", "learning_rate", "train/lr", "train/learning_rate")


class TrainwireTracker(GeneralTracker, LifecycleAdapter):  # type: ignore[misc]
    """A `GeneralTracker` writing `<output_dir>/progress.jsonl` (the current directory by default).

    Make it on every rank (it only writes on the main process). The run starts at the first
    `log` (with the config of `init_trackers`, its project name as the run's name unless
    `name=` is given, and `init_kwargs={"trainwire": {"tags": [...]}}` as its tags) and finishes at `end_training`: `succeeded`,
    or `interrupted` after a stop. `stop=True` watches the control file in `output_dir`;
    `signals=True` maps SIGINT/SIGTERM to a stop from now on. Used as a context manager, an
    exception out of the block ends the run `failed` (`interrupted` for Ctrl+C).
    `total_steps` goes into `run.started`; `run_options` to the `Run`.
    Registered by name (`register_tracker_class(TrainwireTracker)`, `log_with="trainwire"`),
    Accelerate makes it in `init_trackers` with the project name as its first argument: the
    project name then names the run, and the output goes to the Accelerator's `logging_dir`
    (its `project_dir` unless set apart), else the current directory.
    """

    name = "trainwire"
    requires_logging_directory = False
    main_process_only = True

    def __init__(
        self,
        output_dir: str | os.PathLike[str] = ".",
        *,
        stop: bool | StopControl = True,
        signals: bool = False,
        total_steps: int | None = None,
        check_interval_s: float = 0.25,
        sync_every_steps: int = 1,
        **run_options: Any,
    ) -> None:
        super().__init__()
        output_dir = registered_output_dir(sys._getframe(1), output_dir)
        # Run knows the global rank from the launcher's variables; PartialState is left to
        # the Accelerator, which may be given process-group settings yet.
        made, new_run = owned_run(output_dir, **run_options)
        zero = made.active
        run = made if zero else None
        control = chosen_stop(stop, run, zero=zero, directory=output_dir, check_interval_s=check_interval_s)
        if signals and control is not None and not control.handles_signals:
            control.install_signal_handlers()
        self.lifecycle = Lifecycle(run, stop=control, owns_run=True, sync_every_steps=sync_every_steps, new_run=new_run)
        self._total_steps = total_steps
        self._config: dict[str, Any] | None = None
        self._project: tuple[str | None, Any] = (None, None)  # init_trackers' name and tags

    # -- GeneralTracker -------------------------------------------------------------------

    @property
    def tracker(self) -> Run | None:
        """The run written to (Accelerate's name for a tracker's own object)."""
        return self.run

    def start(self) -> None:
        """Called by `init_trackers`, which gives a tracker made beforehand nothing of its
        arguments: its `project_name` and `init_kwargs["trainwire"]["tags"]` are read from
        its frame, to name the run (a name given to the tracker stays)."""
        self._project = init_trackers_naming(sys._getframe(1))

    def store_init_configuration(self, values: dict[str, Any]) -> None:
        self._config = dict(values)

    def log(self, values: dict[str, Any], step: int | None = None, **kwargs: Any) -> None:
        run = self._begin(step)
        if run is None:
            return
        step = step if step is not None else (run.last_step or 0) + 1  # a log without a step is the next one
        evaluations: dict[str, dict[str, Any]] = {}
        training: dict[str, Any] = {}
        for name, value in values.items():
            prefix = next((prefix for prefix in EVAL_PREFIXES if name.startswith(prefix)), None)
            if prefix is None:
                training[name] = value
            else:
                evaluations.setdefault(EVAL_PREFIXES[prefix], {})[name[len(prefix) :]] = value
        if training:
            run.step(
                step,
                loss=number(_first(training, _LOSS_KEYS)),
                learning_rate=number(_first(training, _LEARNING_RATE_KEYS)),
                metrics={k: v for k, v in training.items() if k not in _LOSS_KEYS + _LEARNING_RATE_KEYS} or None,
                memory=step_memory(),
            )
        for split, metrics in evaluations.items():
            run.eval(step, metrics, split=split)

    def finish(self) -> None:
        self._begin(None)  # a training that logged nothing is still a run
        self.lifecycle.end_train()
        self.lifecycle.finish()

    # -- the loop's calls -----------------------------------------------------------------

    def decide_stop(self, step: int) -> StopRequest | None:
        """At the end of every step, on every rank: the stop all ranks agree on, when it is new
        (a collective in a distributed job). Save a checkpoint and leave the loop then."""
        return self.lifecycle.decide_stop(step)

    def checkpoint(self, step: int, path: str | os.PathLike[str]) -> None:
        """A checkpoint was saved at `path` (on every rank: written once): `checkpoint.saved`,
        and after a stop the checkpoint `run.finished` names."""
        if self.stopped:
            self.lifecycle.stop_checkpoint = Path(path).absolute()
        if self.run is not None and self.run.started:
            self.run.checkpoint(step, Path(path).absolute(), "stop" if self.stopped else "periodic")

    @property
    def exit_code(self) -> int:
        """The process's exit code: the finished run's on the main process; elsewhere (or
        before the run finished) 2 after a stop, else 0."""
        code = self.run.exit_code if self.run is not None else None
        if code is not None:
            return code
        return 2 if self.stopped else 0

    def __enter__(self) -> TrainwireTracker:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if error is not None:
            self._begin(None)
            self.lifecycle.fail(error)

    # -- internals ------------------------------------------------------------------------

    def _begin(self, step: int | None) -> Run | None:
        if not self.lifecycle.in_train:
            self.lifecycle.begin_train(step or 0, total_steps=self._total_steps, start=self._start_run)
        return self.run

    def _start_run(self, run: Run) -> None:
        project, tags = self._project
        run.start(
            total_steps=self._total_steps,
            config=self._config,
            world_size=PartialState().num_processes,
            name=project if run.name is None else None,
            tags=tags,
        )


def registered_output_dir(frame: FrameType | None, output_dir: str | os.PathLike[str]) -> str | os.PathLike[str]:
    """`output_dir`, unless `frame` is the `Accelerator.init_trackers` that made the tracker
    by its registered name and gave it the project name there: then the Accelerator's
    `logging_dir`, else the current directory (a project name is not a place)."""
    if frame is None or frame.f_code.co_name != "init_trackers" or frame.f_locals.get("project_name") != output_dir:
        return output_dir
    logging_dir = getattr(frame.f_locals.get("self"), "logging_dir", None)
    return logging_dir if isinstance(logging_dir, (str, os.PathLike)) and str(logging_dir) else "."


def init_trackers_naming(frame: FrameType | None) -> tuple[str | None, Any]:
    """`project_name` and the tags of `init_kwargs["trainwire"]` of the `Accelerator.init_trackers`
    call whose frame is `frame`; (None, None) for any other caller."""
    if frame is None or frame.f_code.co_name != "init_trackers":
        return None, None
    project, options = frame.f_locals.get("project_name"), frame.f_locals.get("init_kwargs")
    ours = options.get(TrainwireTracker.name) if isinstance(options, Mapping) else None
    return (project if isinstance(project, str) else None), (ours.get("tags") if isinstance(ours, Mapping) else None)


def _first(values: Mapping[str, Any], names: tuple[str, ...]) -> Any:
    return next((values[name] for name in names if name in values), None)
