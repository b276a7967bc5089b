"""The stop a `with Run(...)` block listens to by itself: the control file, SIGINT, SIGTERM
and SIGBREAK, honoured at the next `run.step()` or phase boundary by raising
`RunInterrupted`, which the block turns into `interrupted` (docs/stop.md).

Signal handlers are installed only while the block runs, only in the main thread, only
where the current handler is Python's default (a notebook, Lightning, Ray or `torchrun` keep
theirs), and restored after; nothing at import. A caller that made its own `StopControl` for
the run (an integration, a loop that decides where to stop) is adopted: the run then reads
no file and raises nothing, and hands it the signals its handlers get.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

from trainwire.contract.clock import Clock
from trainwire.contract.errors import RunInterrupted
from trainwire.writer.paths import PathLike
from trainwire.writer.stop_control import StopControl, StopListener

__all__ = ["SaveCheckpoint", "RunStop", "stop_channels"]

logger = logging.getLogger("trainwire.stop")

#: called at a stop with the last step (or None); returns the checkpoint saved, or None
SaveCheckpoint = Callable[[int | None], PathLike | None]

#: the signals a run listens to, by their `stop_channels` name
_SIGNALS = {"SIGINT": "sigint", "SIGTERM": "sigterm", "SIGBREAK": "sigbreak"}
#: handlers that are Python's own: only those are replaced
_DEFAULT_HANDLERS: tuple[Any, ...] = (signal.SIG_DFL, signal.default_int_handler)


def stop_channels(control: StopControl | None, signals: list[str]) -> list[str]:
    """`run.started.stop_channels`: the control file when one is watched, the signals
    handled, and `api` (a request from code) whenever anything listens."""
    if control is None and not signals:
        return []
    channels = ["control_file"] if control is not None and control.path is not None else []
    return [*channels, *signals, "api"]


class RunStop:
    """The stop of one `Run`: `enter()` and `exit()` bracket its `with` block; `poll()` runs
    at each step and phase boundary of the thread that entered it."""

    def __init__(
        self,
        listener: StopListener,
        output_dir: str | None,
        *,
        enabled: bool,
        clock: Clock,
        on_stop: SaveCheckpoint | None,
        check_interval_s: float = 0.25,
    ) -> None:
        self._listener = listener
        self._output_dir = output_dir
        self._enabled = enabled
        self._clock = clock
        self._on_stop = on_stop
        self._check_interval_s = check_interval_s
        self.control: StopControl | None = None  # the run's own, while its block runs
        self.adopted: StopControl | None = None  # the caller's, once told of it
        self._thread: int | None = None
        self._raised: RunInterrupted | None = None
        self._previous: dict[int, Any] = {}

    # -- the block ------------------------------------------------------------------------

    def enter(self) -> None:
        """At the block's start: watch the control file and take the default signals."""
        if not self._enabled or self.control is not None or self.adopted is not None:
            return
        control = StopControl(self._output_dir, check_interval_s=self._check_interval_s, clock=self._clock)
        control.run = self._listener  # set after: made with run=None, it is not adopted as the caller's
        self.control = control
        self._thread = threading.get_ident()
        if threading.current_thread() is threading.main_thread():
            self._install_handlers()

    def exit(self) -> None:
        """At the block's end: restore the handlers it replaced (where still its own)."""
        for number, previous in self._previous.items():
            if signal.getsignal(number) == self._on_signal:
                signal.signal(number, previous)
        self._previous.clear()
        self.control = None
        self._thread = None

    def adopt(self, control: StopControl) -> None:
        """A `StopControl` made for this run: it decides from now on."""
        self.adopted = control

    def owns(self, error: BaseException | None) -> bool:
        """Whether `error` is the `RunInterrupted` this stop raised (the block swallows it)."""
        return error is not None and error is self._raised

    def channels(self) -> list[str]:
        """What the run listens to now (`run.started.stop_channels`)."""
        numbers = set(self._previous) | (self.adopted.handled_signals if self.adopted is not None else set())
        signals = [channel for name, channel in _SIGNALS.items() if getattr(signal, name, None) in numbers]
        return stop_channels(self.adopted or self.control, signals)

    # -- at steps and phase boundaries ----------------------------------------------------

    def poll(self, *, force: bool = False) -> None:
        """Raises `RunInterrupted` once a stop was requested (on the block's thread only)."""
        control = self.control
        if control is None or self.adopted is not None or threading.get_ident() != self._thread:
            return
        found = control.check(force=force)
        if found is not None:
            self._raised = RunInterrupted(found.finish_reason)
            raise self._raised

    def save_checkpoint(self, step: int | None) -> PathLike | None:
        """The checkpoint `on_stop` saved for a stop, or None (none given, or it failed:
        logged, the run still ends interrupted)."""
        if self._on_stop is None:
            return None
        try:
            return self._on_stop(step)
        except Exception:  # the user's save failed: the stop must still end the run
            logger.exception("trainwire: on_stop failed; the run ends interrupted without a stop checkpoint")
            return None

    # -- signals ----------------------------------------------------------------------------

    def _install_handlers(self) -> None:
        for name in _SIGNALS:
            number = getattr(signal, name, None)
            if number is None:
                continue
            try:
                current = signal.getsignal(number)
                if current not in _DEFAULT_HANDLERS:
                    continue  # someone else's (a notebook's, a framework's): theirs stays
                self._previous[number] = signal.signal(number, self._on_signal)
            except (OSError, ValueError) as error:  # a signal this platform will not let us take
                logger.debug("trainwire: %s not handled: %s", name, error)

    def _on_signal(self, number: int, frame: FrameType | None) -> None:
        target = self.adopted or self.control
        if target is not None:
            target.handle_signal(number, frame)
