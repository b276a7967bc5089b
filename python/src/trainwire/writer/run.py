"""The emitter: `Run` writes one run's events to its sinks, following docs/writer-rules.md.

`Run` is its constructor and documentation; each of its methods is written once, beside the
events of its concern and the state it changes, in a private base class: `_TrainingEvents`
(`training_events.py`), `_PhaseEvents` (`phase_events.py`), `_TrialEvents`
(`trial_events.py`) and `_Lifetime` (`run_lifetime.py`), around one narrow core
(`run_core.py`: the lock and the gate every event passes)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Mapping
from types import TracebackType
from typing import Any

from trainwire.contract.clock import Clock, SystemClock
from trainwire.contract.layout import STREAM_FILE
from trainwire.writer.arguments import Arguments, checked_run_id
from trainwire.writer.checks import Complaints, RejectedInput
from trainwire.writer.fields import UNSET, ErrorLike, Unset, clean_metrics, error_info, new_run_id
from trainwire.writer.kubeflow import reporter_for_run
from trainwire.writer.lines import LineWriter
from trainwire.writer.outputs import open_sinks
from trainwire.writer.paths import PathLike
from trainwire.writer.rank import global_rank
from trainwire.writer.run_lifetime import _Lifetime
from trainwire.writer.run_stop import RunStop, SaveCheckpoint
from trainwire.writer.scopes import ThreadScopes
from trainwire.writer.sinks import Dispatcher, Sink
from trainwire.writer.spans import OpenSpans
from trainwire.writer.step_progress import StepProgress
from trainwire.writer.stream_loss import StreamLost

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


class Run(_Lifetime):
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
        self._complain = complain = Complaints(strict)
        self._args = args = Arguments(complain)
        clock = clock if clock is not None else SystemClock()
        # One clock reading names the run and dates its run.started, so the two never differ.
        made_at = clock.now()
        self._started_at = made_at if run_id is None else None
        self._run_id = run_id = checked_run_id(run_id, lambda: made_at)
        self._active = active = (global_rank() if rank is None else rank) == 0
        self._output_dir = os.path.abspath(output_dir) if output_dir is not None else None
        self._producer = args.producer(producer)
        self._monotonic = clock.monotonic
        self._heartbeat_interval_s = args.heartbeat_interval(heartbeat_interval_s)
        self._heartbeat_thread = heartbeat_thread
        self._objective = objective
        self._name = args.run_name(name)
        self._tags = args.tags(tags)
        self._lock = threading.RLock()
        self._run_start = self._monotonic()
        self._spans = OpenSpans(self._monotonic)
        self._scopes = ThreadScopes()
        self._steps = StepProgress(step_interval_s)
        self._step_interval_s = self._steps.interval_s
        self._trial_steps = {}
        self._journal = None
        self._kubeflow = None
        made: list[Sink] = []
        if active:
            made, self._journal = open_sinks(
                self._output_dir,
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
            self._kubeflow = reporter_for_run(kubeflow)  # last: it sees what the stream took
            if self._kubeflow is not None:
                made.append(self._kubeflow)
        self._dispatcher = Dispatcher(made, strict=strict)
        self._lines = lines = LineWriter(
            run_id, args.stage(stage), self._dispatcher, clock.now, self._monotonic, complain
        )
        if self._journal is not None:
            self._journal.stream_completeness = self._dispatcher.completeness  # lines lost, for the summary
            lines.left_out = self._journal.keep_step  # every step kept, written or not
            lines.before_finished = self._journal.append_kept_now  # all kept steps on disk first
        self._step_envelope = lines.new_line("train.step")
        self._stop = RunStop(self, self._output_dir, enabled=stop and active, clock=clock, on_stop=on_stop)

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
        return f"Run(run_id={self._run_id!r}, status={self._status!r})"
