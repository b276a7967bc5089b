"""The lifecycle every trainer integration shares, kept apart from the framework's hooks.

A `Lifecycle` holds the state of one callback across trainings: the run it writes to (and
whether it owns it), the stop control, the honoured stop, whether the `train` phase is
open. An adapter maps its framework's hooks onto these calls, on every rank:

| framework moment | call |
|---|---|
| training starts | `begin_train(step, total_steps=..., start=...)` |
| the end of every optimizer step (all ranks, same steps) | `decide_stop(step)` |
| between steps (logs, evaluations), single process only | `poll_stop()` |
| training returns | `end_train()`, then `finish()` |
| training raises | `fail(error)` |
| a search of several trainings (one run) starts, ends | `begin_search()`, `end_search(error)` |

`decide_stop` and `poll_stop` return the newly honoured request: the adapter then asks its
framework to save a checkpoint and leave the loop, and may set `stop_checkpoint`. What a
step, an epoch or an evaluation writes stays in the adapter; so do the framework's own
signal quirks. Only world process zero writes: on other ranks `run` is None and every call
still keeps the state (and the collective of `decide_stop`) in step.
"""

from __future__ import annotations

import functools
import logging
import os
import sys
from collections.abc import Callable
from typing import Any

from trainwire.contract.errors import RunInterrupted
from trainwire.contract.status import status_for_exception
from trainwire.integrations.core.distributed import agreed_stop, is_distributed
from trainwire.stop import StopControl, StopRequest
from trainwire.writer.run import Run

__all__ = ["Lifecycle", "LifecycleAdapter", "chosen_stop", "is_out_of_memory", "owned_run", "watched_stop"]

logger = logging.getLogger("trainwire.integrations.lifecycle")


def owned_run(directory: str | os.PathLike[str], **run_options: Any) -> tuple[Run, Callable[[], Run]]:
    """A run the callback owns, and the factory of the runs that follow it in the same file
    (a later training after the owned run ended gets its own id)."""
    later_options = {name: value for name, value in run_options.items() if name != "run_id"}
    return Run(directory, **run_options), functools.partial(Run, directory, **later_options)


def watched_stop(
    run: Run | None,
    *,
    zero: bool,
    directory: str | os.PathLike[str] | None = None,
    check_interval_s: float = 0.25,
) -> StopControl:
    """The stop control of a callback that watches the control file: the run's output
    directory, else `directory`. Only rank 0 watches (and clears) the file; the others learn
    of it through `decide_stop`'s reduce."""
    watched = ((run.output_dir if run is not None else None) or directory) if zero else None
    return StopControl(watched, run=run if zero else None, check_interval_s=check_interval_s)


def chosen_stop(
    stop: bool | StopControl,
    run: Run | None,
    *,
    zero: bool,
    directory: str | os.PathLike[str] | None = None,
    check_interval_s: float = 0.25,
) -> StopControl | None:
    """The stop control an integration's `stop=` option asks for: the caller's
    `StopControl`, the watched control file (`True`) or none (`False`)."""
    if isinstance(stop, StopControl):
        return stop
    return watched_stop(run, zero=zero, directory=directory, check_interval_s=check_interval_s) if stop else None


def is_out_of_memory(error: BaseException) -> bool:
    """True for an out-of-memory error of the accelerator (torch's, or one that says so)."""
    torch = sys.modules.get("torch")  # an error of torch's means torch is imported
    oom_type = getattr(torch, "OutOfMemoryError", None) if torch is not None else None
    return (oom_type is not None and isinstance(error, oom_type)) or "out of memory" in str(error).lower()


class Lifecycle:
    """Run ownership, the stop and the train phase of one trainer callback.

        `run` is the run written to (None on ranks other than world process zero). With
        `owns_run`, the run is started by `begin_train` (through the adapter's `start`) and
        finished by `finish` or `fail`; after it ended, the next `begin_train` makes a new run
        with `new_run` (same file, new id). A caller's run stays one run: it is never finished
        here, and a training that starts again is an attempt (`train.restarted`); a training in
    another trial (`Run.current_trial`) is that trial's first, not a restart. Between
    `begin_search` and `end_search` an owned run spans every training: the search finishes it.
    `signals=True`
        installs the stop's signal handlers from `begin_train` to `end_train` or `fail`.
        `flush(run)` writes what the adapter holds back (a step waiting for its log) before the
        run starts or the phase closes. `renewed()` tells the adapter a new owned run began.
    """

    def __init__(
        self,
        run: Run | None,
        *,
        stop: StopControl | None = None,
        owns_run: bool = False,
        sync_every_steps: int = 1,
        signals: bool = False,
        new_run: Callable[[], Run] | None = None,
        flush: Callable[[Run], None] | None = None,
        renewed: Callable[[], None] | None = None,
    ) -> None:
        self.run = run
        #: polled at step ends (and between steps in a single process); None: stops are not watched
        self.stop = stop
        self.owns_run = owns_run
        # Every rank reduces the stop flag on the same steps: a fixed cadence, never a clock.
        self.sync_every_steps = max(1, sync_every_steps)
        self.new_run = new_run
        #: the honoured stop; it belongs to the run it stopped (a new owned run forgets it)
        self.stop_request: StopRequest | None = None
        #: the checkpoint saved because of the stop, for `run.finished.checkpoint`
        self.stop_checkpoint: str | os.PathLike[str] | None = None
        self.in_train = False  # between begin_train and end_train (or fail) of one training
        self._signals = signals
        self._signals_installed = False
        self._flush = flush
        self._renewed = renewed
        self._owned_run_ended = False  # on every rank: the owned run wrote (or would write) run.finished
        self._finishing = False  # run.finished is being written: nothing may write a second one
        self._train_phase_open = False
        self._failed_out_of_memory = False
        self._trial_of_train: int | None = None  # the trial the last training ran in
        #: between begin_search and end_search: the owned run is the search's, not a training's
        self.searching = False

    # -- the honoured stop --------------------------------------------------------------

    @property
    def takes_signals(self) -> bool:
        """Whether the stop's signal handlers are installed while training (`signals=True`)."""
        return self._signals

    @property
    def stopped(self) -> bool:
        """True once a stop was honoured during training."""
        return self.stop_request is not None

    def raise_if_stopped(self) -> None:
        """Raise `RunInterrupted` when training was stopped: later phases must not run."""
        if self.stop_request is not None:
            raise RunInterrupted(self.stop_request.finish_reason)
        if self.stop is not None:
            self.stop.raise_if_stopped()

    # -- training -----------------------------------------------------------------------

    def begin_train(
        self,
        step: int,
        *,
        total_steps: int | None,
        start: Callable[[Run], None],
        writes: bool = True,
        **restart_fields: Any,
    ) -> Run | None:
        """Training starts at `step`: returns the run to write to, started, with the train
        phase open (None where nothing is written, `writes=False` included).

        A second begin without an end is the framework retrying in place after an
        out-of-memory error (transformers' `auto_find_batch_size`): an `oom` attempt of the
        same run. Otherwise an owned run that ended is followed by a new one; a run that
        goes on is restarted (`oom` after an out-of-memory failure, `other` when the step
        went back). `restart_fields` go into `train.restarted` (the batch sizes).
        """
        retried_in_place = self.in_train
        self.in_train = True
        self._install_signals()
        if not retried_in_place:
            self.renew()
        out_of_memory, self._failed_out_of_memory = retried_in_place or self._failed_out_of_memory, False
        run = self.run if writes else None
        if run is None:
            return None
        # A training in another trial starts that trial's steps: not an attempt of the last one.
        same_trial, self._trial_of_train = run.current_trial == self._trial_of_train, run.current_trial
        if self._flush is not None:
            self._flush(run)
        if not run.started:
            # An owned run starts here; so does a caller's run that was not started yet, so
            # that the stream always opens with run.started.
            start(run)
        elif same_trial and (out_of_memory or (run.last_step is not None and step < run.last_step)):
            # Announced before the step counter goes back.
            run.restarted("oom" if out_of_memory else "other", step=step, total_steps=total_steps, **restart_fields)
        if not self._train_phase_open:
            run.phase_started("train")
            self._train_phase_open = True
        return run

    def renew(self) -> bool:
        """After an owned run ended, the next training (or evaluation) is a new run in the
        same file: True when that happened."""
        if not self._owned_run_ended:
            return False
        self._owned_run_ended = False
        if self.run is not None and self.new_run is not None:
            self.run = self.new_run()
        if self.stop is not None:
            self.stop.rearm(self.run)
        self.stop_request = None
        self.stop_checkpoint = None
        self._finishing = False
        self._train_phase_open = False
        if self._renewed is not None:
            self._renewed()
        return True

    def decide_stop(self, step: int) -> StopRequest | None:
        """At the end of a step, on every rank: the stop all ranks agree on, when it is new.

        In a distributed job this is a collective every `sync_every_steps` steps: every
        rank must call it at every step end.
        """
        if self.stop is None or self.stop_request is not None:
            return None
        if is_distributed() and step % self.sync_every_steps:
            return None  # every rank skips the same steps
        return self._honour(agreed_stop(self.stop))

    def poll_stop(self) -> StopRequest | None:
        """Between step ends (a log, an evaluation, the end of training): a new stop, in a
        single process only; a distributed job waits for the next `decide_stop`, where all
        ranks agree."""
        if self.stop is None or self.stop_request is not None or is_distributed():
            return None
        return self._honour(self.stop.check())

    def end_train(self, *, writes: bool = True) -> None:
        """Training returned: the train phase ends, `interrupted` after a stop, else `ok`."""
        self.in_train = False
        self._release_signals()
        if writes and self.run is not None:
            if self._flush is not None:
                self._flush(self.run)
            self.close_train_phase("interrupted" if self.stopped else "ok")

    def finish(self, *, writes: bool = True) -> None:
        """An owned run ends with the training: `interrupted` (with the stop's reason and
        checkpoint) after a stop, else `succeeded`. A caller's run is the caller's to finish."""
        if self.searching:
            return  # the search's run goes on to its next training
        run = self.run if writes else None
        if run is not None and self.owns_run and run.status is None:
            self._finishing = True
            if self.stop_request is not None:
                run.finish("interrupted", reason=self.stop_request.finish_reason, checkpoint=self.stop_checkpoint)
            else:
                run.finish("succeeded")
        self._owned_run_ended = self.owns_run

    def fail(self, error: BaseException) -> None:
        """Training raised `error`: the phase ends `failed` (`interrupted` for an interrupt)
        and an owned run finishes as the error says (`Run.finish_for`)."""
        self.in_train = False
        self._release_signals()
        self._owned_run_ended = self.owns_run and not self.searching
        self._failed_out_of_memory = is_out_of_memory(error)
        run = self.run
        if run is None or run.status is not None:
            return
        if self._finishing:
            # The error came while run.finished was written (a KeyboardInterrupt in a sink):
            # it is in the stream; close the run so that nothing follows it.
            run.close()
            return
        if self._flush is not None:
            self._flush(run)
        interrupted = status_for_exception(error) == "interrupted"
        self.close_train_phase("interrupted" if interrupted else "failed")
        if self.owns_run and not self.searching:
            self._finishing = True
            run.finish_for(error)

    def begin_search(self) -> None:
        """A search begins: its trainings (one per trial) write into one run, which
        `end_search` finishes."""
        self.renew()
        self.searching = True

    def end_search(self, error: BaseException | None, *, writes: bool = True) -> None:
        """The search returned (`error` None) or raised: an owned run ends `interrupted`
        after a stop, else as `error` says (`Run.finish_for`)."""
        self.searching = False
        if self.stop_request is None and self.stop is not None:
            self.stop_request = self.stop.honoured  # honoured by the engine (Tune's stopper polls it)
        run = self.run if writes else None
        if error is None or run is None or run.status is not None:
            self.finish(writes=writes)
            return
        if self.owns_run:
            self._finishing = True
            run.finish_for(error)
        self._owned_run_ended = self.owns_run

    def close_train_phase(self, status: str) -> None:
        """Writes `phase.ended train` with `status`, once, if the phase is open."""
        if self._train_phase_open and self.run is not None:
            self.run.phase_ended("train", status=status)
        self._train_phase_open = False

    # -- internals ------------------------------------------------------------------------

    def _honour(self, found: StopRequest | None) -> StopRequest | None:
        if found is not None:
            self.stop_request = found
        return found

    def _install_signals(self) -> None:
        # A control whose handlers someone else installed keeps them: they are not ours to remove.
        if not self._signals or self.stop is None or self._signals_installed or self.stop.handles_signals:
            return
        try:
            self.stop.install_signal_handlers()
        except RuntimeError as error:  # not the main thread
            logger.warning("trainwire: stop signals not handled: %s", error)
            return
        self._signals_installed = True

    def _release_signals(self) -> None:
        # Outside the loop nobody polls the stop: a Ctrl+C must not be swallowed.
        if self._signals_installed and self.stop is not None:
            self.stop.uninstall()
        self._signals_installed = False


class LifecycleAdapter:
    """What a framework callback built on a `Lifecycle` shows its caller: the run, the
    stop control and the outcome of a stop once training returned."""

    lifecycle: Lifecycle

    @property
    def run(self) -> Run | None:
        """The run written to (None on ranks other than world process zero)."""
        return self.lifecycle.run

    @property
    def stop(self) -> StopControl | None:
        """The stop control polled during training (None: stops are not watched)."""
        return self.lifecycle.stop

    @property
    def owns_run(self) -> bool:
        """True when the callback starts and finishes the run."""
        return self.lifecycle.owns_run

    @property
    def sync_every_steps(self) -> int:
        """In a distributed job, the ranks agree on a stop every this many steps."""
        return self.lifecycle.sync_every_steps

    @property
    def stopped(self) -> bool:
        """True once a stop was honoured during training."""
        return self.lifecycle.stopped

    @property
    def stop_request(self) -> StopRequest | None:
        """The honoured stop request, if any."""
        return self.lifecycle.stop_request

    def raise_if_stopped(self) -> None:
        """Raise `RunInterrupted` when training was stopped: later phases must not run."""
        self.lifecycle.raise_if_stopped()
