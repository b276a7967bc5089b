"""The mechanics of the cooperative stop: the control file, the request, the signal handlers.

A controller calls `request_stop(output_dir)`, which creates `<output_dir>/.trainwire-stop`
atomically. The training side polls a `StopControl` at step ends and phase boundaries;
signals, when their handlers are installed, feed the same path. Public as `trainwire.stop`;
here, below the writer, so that a `Run` block can listen by itself (`run_stop`). See
`docs/stop.md`. It imports neither torch nor transformers.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, Literal, Protocol

from trainwire.contract.clock import Clock, SystemClock
from trainwire.contract.errors import RunInterrupted
from trainwire.contract.files import write_json_atomically
from trainwire.contract.limits import clip
from trainwire.contract.status import stop_reason


class StopListener(Protocol):
    """What a `StopControl` writes the honoured request to: a `Run`."""

    def stop_requested(
        self, source: str, *, signal: str | None = None, reason: str | None = None, requested_by: str | None = None
    ) -> None: ...


__all__ = [
    "MAX_BODY_BYTES",
    "STOP_FILE",
    "StopControl",
    "StopRequest",
    "StopSource",
    "process_start_time",
    "request_stop",
]

logger = logging.getLogger("trainwire.stop")

#: the control file's name inside the run's output directory (a contract: do not change)
STOP_FILE = ".trainwire-stop"
#: a larger body is ignored (the stop still counts)
MAX_BODY_BYTES = 4096

StopSource = Literal["control_file", "signal", "api"]
_HANDLED_SIGNALS = ("SIGINT", "SIGTERM", "SIGBREAK")
# The fallback start time when the OS cannot tell: the first import of this module.
_IMPORTED_AT = time.time()
_SignalHandler = Callable[[int, FrameType | None], Any] | int | None


@dataclass(frozen=True)
class StopRequest:
    """One request to stop, as written in `stop.requested`."""

    source: StopSource
    signal: str | None = None
    reason: str | None = None
    requested_by: str | None = None

    @property
    def finish_reason(self) -> str:
        """The `run.finished.reason` it leads to: `control_file`, `sigint`, `sigterm`, `sigbreak` or `api`."""
        return stop_reason(self.source, self.signal) or self.source


def request_stop(
    output_dir: str | os.PathLike[str], *, reason: str | None = None, requested_by: str | None = None
) -> Path:
    """Ask the run writing into `output_dir` to stop; returns the control file's path.

    The file appears atomically (a temp file in the same directory, then `os.replace`), so
    the run never reads half a body.
    """
    directory = Path(output_dir)
    if not directory.is_dir():
        raise FileNotFoundError(f"not a directory: {directory}")
    body = {key: value for key, value in (("reason", clip(reason)), ("requested_by", clip(requested_by))) if value}
    target = directory / STOP_FILE
    write_json_atomically(target, body)
    return target


def process_start_time() -> float:
    """When this process started (epoch seconds), as precisely as the platform tells.

    Linux: `/proc` (boot time has one-second resolution, so the value may be up to a
    second early); elsewhere psutil when installed; else the time this module was imported.
    """
    try:
        with open("/proc/self/stat", encoding="ascii") as stat_file:
            # Field 22 (starttime, clock ticks since boot) follows the ")" that ends the name.
            ticks = int(stat_file.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/stat", encoding="ascii") as system_stat:
            boot = next(int(line.split()[1]) for line in system_stat if line.startswith("btime "))
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration, AttributeError):
        pass
    try:
        import psutil  # type: ignore[import-untyped]

        return float(psutil.Process().create_time())
    except Exception:  # not installed, or no access: the import time is the next best
        return _IMPORTED_AT


class StopControl:
    """The training side of the cooperative stop.

    Poll `check()` at step ends and phase boundaries: it reads the control file at most once
    per `check_interval_s` and returns the honoured `StopRequest` (the same one on every
    later call), or None. With a `run` attached, the first honoured request is written as
    `stop.requested` exactly once. `clock` is a `trainwire.contract.clock.Clock` (its monotonic
    reading paces the file checks). `output_dir=None` watches no file (signals and `request()`
    only), e.g. on the non-zero ranks of a distributed job.
    """

    def __init__(
        self,
        output_dir: str | os.PathLike[str] | None,
        *,
        run: StopListener | None = None,
        check_interval_s: float = 0.25,
        clock: Clock | None = None,
    ) -> None:
        self.path: Path | None = Path(output_dir) / STOP_FILE if output_dir is not None else None
        self.run = run
        self.check_interval_s = check_interval_s
        self._clock = clock or SystemClock()
        self._next_file_check: float | None = None
        self._request: StopRequest | None = None
        self._lock = threading.Lock()
        # Set by the signal handler: a plain attribute store is all a handler may do safely.
        self._signal_name: str | None = None
        self._previous_handlers: dict[int, _SignalHandler] = {}
        self._warned_symlink = False
        self._remove_stale_file()
        _adopt(run, self)

    def rearm(self, run: StopListener | None = None) -> None:
        """Forget the honoured request (and a pending signal) and write to `run` from now on.

        For a new run in the same process after a stop (a second `train()`): the old request
        was consumed by the run it stopped.
        """
        with self._lock:
            self._request = None
            self._signal_name = None
            self.run = run
        _adopt(run, self)

    # -- state --------------------------------------------------------------------------

    @property
    def requested(self) -> bool:
        """True once a stop was honoured or a signal asked for one."""
        return self._request is not None or self._signal_name is not None

    @property
    def honoured(self) -> StopRequest | None:
        """The honoured request, if any (does not poll)."""
        return self._request

    def check(self, *, force: bool = False) -> StopRequest | None:
        """Honour a pending signal or control file; return the stop request, if any.
        `force` reads the control file even when the last read is less than
        `check_interval_s` ago (at a phase boundary: rare, and the last chance before it)."""
        if self._request is not None:
            return self._request
        if self._signal_name is not None:
            return self._honour(StopRequest(source="signal", signal=self._signal_name))
        if self.path is not None and (self._file_check_due() or force):
            found = self._read_control_file()
            if found is not None:
                return self._honour(found)
        return None

    def request(
        self,
        source: StopSource = "api",
        *,
        signal: str | None = None,
        reason: str | None = None,
        requested_by: str | None = None,
    ) -> StopRequest:
        """Ask for a stop from code (source `api`); returns the honoured request."""
        return self._honour(
            StopRequest(source=source, signal=signal, reason=clip(reason), requested_by=clip(requested_by))
        )

    def raise_if_stopped(self) -> None:
        """At a phase boundary: raise `RunInterrupted` when a stop was requested."""
        found = self.check()
        if found is not None:
            raise RunInterrupted(found.finish_reason)

    def _honour(self, found: StopRequest) -> StopRequest:
        with self._lock:
            if self._request is not None:
                return self._request
            self._request = found
        logger.info("stop requested (%s)", found.finish_reason)
        if self.run is not None:
            self.run.stop_requested(
                found.source, signal=found.signal, reason=found.reason, requested_by=found.requested_by
            )
        return found

    # -- control file -------------------------------------------------------------------

    def _file_check_due(self) -> bool:
        now = self._clock.monotonic()
        if self._next_file_check is not None and now < self._next_file_check:
            return False
        self._next_file_check = now + self.check_interval_s
        return True

    def _remove_stale_file(self) -> None:
        # A file left by an earlier run must not stop this one; a file written since this
        # process started (while the model loaded) is a request for this run and stays.
        if self.path is None:
            return
        try:
            if os.lstat(self.path).st_mtime >= process_start_time():
                return
            self.path.unlink()
        except FileNotFoundError:
            return
        except OSError as error:
            logger.warning("could not remove the stale stop file %s: %s", self.path, error)
            return
        logger.info("removed a stale stop file %s", self.path)

    def _read_control_file(self) -> StopRequest | None:
        assert self.path is not None
        try:
            info = os.lstat(self.path)
        except FileNotFoundError:
            return None
        except OSError as error:
            logger.warning("could not inspect the stop file %s: %s", self.path, error)
            return None
        if not stat.S_ISREG(info.st_mode):
            # A symlink could point anywhere; only a plain file written by a controller counts.
            if not self._warned_symlink:
                logger.warning("ignoring %s: not a regular file (symlinks are not followed)", self.path)
                self._warned_symlink = True
            return None
        body = self._read_body()
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass
        except OSError as error:
            logger.warning("could not remove the honoured stop file %s: %s", self.path, error)
        return StopRequest(
            source="control_file", reason=clip(body.get("reason")), requested_by=clip(body.get("requested_by"))
        )

    def _read_body(self) -> dict[str, Any]:
        assert self.path is not None
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
        try:
            fd = os.open(self.path, flags)
        except OSError as error:
            logger.warning("could not read the stop file %s: %s", self.path, error)
            return {}
        with os.fdopen(fd, "rb") as file:
            raw = file.read(MAX_BODY_BYTES + 1)
        if len(raw) > MAX_BODY_BYTES:
            logger.warning("ignoring the stop file's body: larger than %d bytes", MAX_BODY_BYTES)
            return {}
        if not raw.strip():
            return {}
        try:
            body = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            logger.warning("ignoring the stop file's body: not a JSON object")
            return {}
        if not isinstance(body, dict):
            logger.warning("ignoring the stop file's body: not a JSON object")
            return {}
        return body

    # -- signals ------------------------------------------------------------------------

    @property
    def handles_signals(self) -> bool:
        """True while this control's signal handlers are installed."""
        return bool(self._previous_handlers)

    @property
    def handled_signals(self) -> set[int]:
        """The numbers of the signals this control's handlers take now."""
        return set(self._previous_handlers)

    def install_signal_handlers(self) -> StopControl:
        """Map SIGINT/SIGTERM (POSIX) and SIGBREAK (Windows) to a graceful stop.

        Main thread only. The first signal records the request; a second one restores the
        default handler and re-raises the signal, so the process dies the hard way.
        """
        if threading.current_thread() is not threading.main_thread():
            raise RuntimeError("signal handlers can only be installed from the main thread")
        for name in _HANDLED_SIGNALS:
            number = getattr(signal, name, None)
            if number is None or number in self._previous_handlers:
                continue
            self._previous_handlers[number] = signal.signal(number, self._on_signal)
        return self

    def uninstall(self) -> None:
        """Restore the handlers that were in place before `install_signal_handlers()`."""
        for number, previous in self._previous_handlers.items():
            signal.signal(number, previous if previous is not None else signal.SIG_DFL)
        self._previous_handlers.clear()

    def handle_signal(self, number: int, frame: FrameType | None = None) -> None:
        """What the installed handler does, for a framework that rewrites the signal table
        (Lightning) and must be handed the signal back."""
        self._on_signal(number, frame)

    def _on_signal(self, number: int, frame: FrameType | None) -> None:
        if self._signal_name is not None:
            # Second signal: the user means it.
            signal.signal(number, signal.SIG_DFL)
            signal.raise_signal(number)
            return
        self._signal_name = _signal_name(number)


def _signal_name(number: int) -> str:
    # The handled names first: on Windows SIGBREAK is the name of its number (and a test
    # that stands another number in for it sees the name the code path gives).
    for name in _HANDLED_SIGNALS:
        if getattr(signal, name, None) == number:
            return name
    return signal.Signals(number).name


def _adopt(run: StopListener | None, control: StopControl) -> None:
    # A run told of the control its caller made stands its own stop down (`run_stop`):
    # one reader of the control file, one decision where to stop.
    adopt = getattr(run, "adopt_stop_control", None)
    if adopt is not None:
        adopt(control)
