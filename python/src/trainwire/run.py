"""The emitter: `Run` writes one run's events to its sinks, following docs/writer-rules.md."""

from __future__ import annotations

import contextlib
import enum
import logging
import os
import re
import secrets
import threading
import time
from collections.abc import Iterator, Mapping
from types import TracebackType
from typing import Any, Callable, Iterable, Literal, Union

from trainwire import __version__
from trainwire._encode import encode_line, safe_str, to_scalar
from trainwire.clock import Clock, SystemClock, format_ts
from trainwire.errors import RunInterrupted
from trainwire.provenance import collect_provenance
from trainwire.rank import global_rank
from trainwire.redact import redact_config
from trainwire.sinks import CallbackSink, Dispatcher, FileSink, Sink, StdoutSink
from trainwire.status import EXIT_CODES, stop_reason

__all__ = ["UNSET", "ErrorLike", "Run", "clean_metrics", "error_info", "new_run_id"]

logger = logging.getLogger("trainwire.run")


class _Unset(enum.Enum):
    UNSET = "UNSET"

    def __repr__(self) -> str:
        return "UNSET"


#: default of optional fields: left out of the line unless given (`None` writes `null`)
UNSET = _Unset.UNSET


_RUN_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
_EVENT_RE = re.compile(r"[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)+")
_SEGMENT = r"(?:[^/\\:.][^/\\:]*|\.(?:[^/\\:.][^/\\:]*)?|\.\.[^/\\:]+)"
_RELATIVE_PATH_RE = re.compile(rf"{_SEGMENT}(?:/{_SEGMENT})*")
_ENVELOPE_KEYS = frozenset({"schema_version", "seq", "ts", "run_id", "event", "stage"})
_MESSAGE_LIMIT = 200

PathLike = Union[str, os.PathLike[str]]
#: what `error=` accepts: an exception, a `(type, message)` pair, a `{type, message}` mapping
ErrorLike = Union[BaseException, tuple[Any, Any], Mapping[str, Any], str, None]


class Run:
    """One run's writer: stamps the envelope and writes each event to every sink at once.

    Only global rank 0 writes; on any other rank every method is a no-op. Nothing here
    raises into training once the run is made: a failing sink is logged and dropped.
    Used as a context manager, the run ends `succeeded`, `failed` (the error is written,
    the exception goes on) or `interrupted` (`RunInterrupted`, `KeyboardInterrupt`).

    Lines go to `<output_dir>/<file_name>` (appended), stdout, `callbacks` and `sinks`.
    `step_interval_s` throttles `train.step` (0 writes every step). With
    `heartbeat_interval_s`, `start()` announces it and starts a thread that writes
    `run.heartbeat` when idle; `heartbeat_thread=False` announces it without the thread
    (for a fake clock: the caller writes `heartbeat()` itself). `rank` defaults to
    `global_rank()`; `clock` to the system clock. A bad `run_id` raises `ValueError`.
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
        file_name: str = "progress.jsonl",
        fsync: bool = False,
        step_interval_s: float = 1.0,
        heartbeat_interval_s: float | None = 30.0,
        heartbeat_thread: bool = True,
        clock: Clock | None = None,
        rank: int | None = None,
        stage: Mapping[str, Any] | None = None,
    ) -> None:
        self._clock: Clock = clock if clock is not None else SystemClock()
        if run_id is None:
            run_id = new_run_id(self._clock.now())
        elif not isinstance(run_id, str) or _RUN_ID_RE.fullmatch(run_id) is None:
            raise ValueError(f"run_id must match [A-Za-z0-9][A-Za-z0-9._:-]{{0,127}}, got {run_id!r}")
        self._run_id = run_id
        self._active = (global_rank() if rank is None else rank) == 0
        self.output_dir = os.path.abspath(output_dir) if output_dir is not None else None
        self._producer = dict(producer) if producer is not None else {"name": "trainwire", "version": __version__}
        self._stage = dict(stage) if stage is not None else None
        # Every line starts as a copy of this: key order is the envelope's, seq and ts are
        # filled in when the line is written (a pending step gets them late).
        self._envelope: dict[str, Any] = {"schema_version": 1, "seq": 0, "ts": "", "run_id": run_id, "event": ""}
        if self._stage is not None:
            self._envelope["stage"] = self._stage
        self._now = self._clock.now
        self._monotonic = self._clock.monotonic
        self._step_interval_s = step_interval_s
        self._heartbeat_interval_s = heartbeat_interval_s if heartbeat_interval_s and heartbeat_interval_s > 0 else None
        self._heartbeat_thread_enabled = heartbeat_thread

        # Reentrant: a callback sink may itself call back into the run.
        self._lock = threading.RLock()
        self._seq = 0
        self._started = False
        self._finished = False
        self._closed = False
        self._status: str | None = None
        self._run_start = self._monotonic()
        self._last_write = self._run_start
        self._open_phases: list[tuple[str, float]] = []
        self._trial_starts: dict[tuple[int, int], float] = {}
        self.stop_reason: str | None = None
        # train.step state (writer rules 5 and 6)
        self._total_steps: int | None = None
        self._last_step: int | None = None
        self._attempt = 1
        self._attempt_start: float | None = None  # monotonic time of the attempt's first step
        self._attempt_start_step = 0
        self._last_step_written = 0.0
        self._pending_step: tuple[dict[str, Any], float, float] | None = None  # line, now(), monotonic()
        self._heartbeat_stop = threading.Event()
        self._heartbeat: threading.Thread | None = None

        self._dispatcher = Dispatcher(self._make_sinks(sinks, stdout, callbacks, file_name, fsync) if self._active else ())

    def _make_sinks(
        self,
        sinks: Iterable[Sink],
        stdout: bool,
        callbacks: Iterable[Callable[[Any], object]],
        file_name: str,
        fsync: bool,
    ) -> list[Sink]:
        made: list[Sink] = []
        if self.output_dir is not None:
            try:
                os.makedirs(self.output_dir, exist_ok=True)
                made.append(FileSink(os.path.join(self.output_dir, file_name), fsync=fsync))
            except OSError as exc:
                logger.warning("trainwire: cannot open %s in %s (%s); no progress file", file_name, self.output_dir, exc)
        if stdout:
            made.append(StdoutSink())
        made.extend(CallbackSink(fn) for fn in callbacks)
        made.extend(sinks)
        return made

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
        """The process exit code for the final status (see `EXIT_CODES`), or None until finished."""
        return None if self._status is None else EXIT_CODES.get(self._status)

    @property
    def last_step(self) -> int | None:
        """The last step reported (written or not), or None before the first."""
        return self._last_step

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
        total_epochs: float | None | _Unset = UNSET,
        config: Any = None,
        seed: int | None = None,
        world_size: int | None = None,
        resumed_from: Mapping[str, Any] | None | _Unset = UNSET,
        provenance: bool | Mapping[str, Any] = True,
    ) -> None:
        """Writes `run.started` and starts the heartbeat thread.

        `provenance=True` collects it (`collect_provenance(seed)`); a mapping is written
        as given; False leaves it out. `resumed_from` is `{run_id, checkpoint, step}`.
        """
        if not self._active or self._started:
            return
        # collected before taking the lock: git may take a moment, the heartbeat must not wait
        redacted = redact_config(config) if config is not None else None
        provenance_fields = self._provenance(provenance, seed)
        with self._lock:
            if self._started:
                logger.debug("trainwire: start() called twice; ignored")
                return
            self._started = True
            self._run_start = self._monotonic()
            self._total_steps = total_steps
            payload: dict[str, Any] = {"producer": self._producer, "total_steps": total_steps}
            if total_epochs is not UNSET:
                payload["total_epochs"] = total_epochs
            if redacted is not None:
                payload["config"] = redacted
            if provenance_fields is not None:
                payload["provenance"] = provenance_fields
            if world_size is not None:
                payload["world_size"] = world_size
            if resumed_from is not UNSET:
                payload["resumed_from"] = None if resumed_from is None else self._resumed_from(resumed_from)
            if self._heartbeat_interval_s is not None:
                payload["heartbeat_interval_s"] = self._heartbeat_interval_s
            self._emit("run.started", payload)
        if self._heartbeat_interval_s is not None and self._heartbeat_thread_enabled:
            self._start_heartbeat()

    def phase_started(self, name: str) -> None:
        """Writes `phase.started`; the phase is open until `phase_ended(name)`."""
        if not self._active:
            return
        with self._lock:
            self._open_phases.append((name, self._monotonic()))
            self._emit("phase.started", {"phase": name})

    def phase_ended(self, name: str, status: str = "ok") -> None:
        """Writes `phase.ended` with the time since the phase started.

        `status` is `ok`, `failed`, `skipped` or `interrupted`.
        """
        if not self._active:
            return
        with self._lock:
            started = self._close_phase(name)
            duration = 0.0 if started is None else self._since(started)
            self._emit("phase.ended", {"phase": name, "status": status, "duration_s": duration})

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[Run]:
        """A phase around a block: ends `ok`, `failed` when the block raises, `interrupted`
        when it raises `RunInterrupted` or `KeyboardInterrupt`. The exception goes on."""
        self.phase_started(name)
        try:
            yield self
        except (RunInterrupted, KeyboardInterrupt):
            self.phase_ended(name, "interrupted")
            raise
        except BaseException:
            self.phase_ended(name, "failed")
            raise
        self.phase_ended(name, "ok")

    def step(
        self,
        step: int,
        *,
        total_steps: int | None | _Unset = UNSET,
        epoch: float | None = None,
        loss: float | None = None,
        learning_rate: float | None = None,
        grad_norm: float | None | _Unset = UNSET,
        samples_per_s: float | None | _Unset = UNSET,
        tokens_per_s: float | None | _Unset = UNSET,
        tokens_seen: int | None | _Unset = UNSET,
        metrics: Mapping[str, Any] | None = None,
    ) -> None:
        """Reports a training step; writes `train.step` unless throttled (writer rule 5).

        `total_steps` is kept from `start()` or the last call that gave it. `elapsed_s`,
        `eta_s` and `progress` are derived from the current attempt (writer rule 6).
        Optional fields left `UNSET` (and `metrics=None`) are omitted; `None` writes null.
        """
        if not self._active:
            return
        with self._lock:
            if self._finished:
                return
            now = self._monotonic()
            if total_steps is not UNSET:
                self._total_steps = total_steps
            total = self._total_steps
            first_of_attempt = self._attempt_start is None
            if first_of_attempt:
                self._attempt_start = now
                self._attempt_start_step = step
            elapsed = _microseconds(now - self._attempt_start)  # type: ignore[operator]
            done = step - self._attempt_start_step
            # clamped (by _microseconds and min): a step past the planned total must not
            # give a negative ETA or a progress above 1
            eta = _microseconds(elapsed * (total - step) / done) if total is not None and done > 0 else None
            progress = min(step / total, 1.0) if total else None
            line = self._envelope.copy()
            line["event"] = "train.step"
            line["step"] = step
            line["total_steps"] = total
            line["epoch"] = epoch
            line["loss"] = loss
            line["learning_rate"] = learning_rate
            if grad_norm is not UNSET:
                line["grad_norm"] = grad_norm
            line["elapsed_s"] = elapsed
            line["eta_s"] = eta
            line["progress"] = progress
            if samples_per_s is not UNSET:
                line["samples_per_s"] = samples_per_s
            if tokens_per_s is not UNSET:
                line["tokens_per_s"] = tokens_per_s
            if tokens_seen is not UNSET:
                line["tokens_seen"] = tokens_seen
            if metrics is not None:
                line["metrics"] = clean_metrics(metrics)
            self._last_step = step

            if first_of_attempt or step == total or now - self._last_step_written >= self._step_interval_s:
                self._pending_step = None
                self._last_step_written = now
                self._write(line)
            else:
                # kept with the time it was reported; any later event writes it first
                self._pending_step = (line, self._now(), now)

    def epoch(self, epoch: int, step: int, metrics: Mapping[str, Any] | None = None) -> None:
        """Writes `train.epoch`: epoch `epoch` (from 1) was completed at `step`."""
        self._emit_active("train.epoch", {"epoch": epoch, "step": step, "metrics": clean_metrics(metrics)})

    def restarted(
        self,
        reason: str = "oom",
        *,
        step: int = 0,
        batch_size_from: int | None | _Unset = UNSET,
        batch_size_to: int | None | _Unset = UNSET,
        total_steps: int | None | _Unset = UNSET,
    ) -> None:
        """Writes `train.restarted` (the attempt is counted here) and starts a new attempt:
        the next step is written at once and the ETA starts over from it."""
        if not self._active:
            return
        with self._lock:
            if self._finished:
                return
            self._flush_pending_step()
            self._attempt += 1
            payload: dict[str, Any] = {
                "reason": reason,
                "attempt": self._attempt,
                "previous_step": self._last_step if self._last_step is not None else 0,
                "step": step,
            }
            if batch_size_from is not UNSET:
                payload["batch_size_from"] = batch_size_from
            if batch_size_to is not UNSET:
                payload["batch_size_to"] = batch_size_to
            if total_steps is not UNSET:
                payload["total_steps"] = total_steps
                self._total_steps = total_steps
            self._last_step = step
            self._attempt_start = None
            self._emit("train.restarted", payload)

    def eval(
        self,
        step: int,
        metrics: Mapping[str, Any] | None = None,
        *,
        epoch: float | None = None,
        split: str = "eval",
    ) -> None:
        """Writes `eval.completed`."""
        self._emit_active(
            "eval.completed", {"step": step, "epoch": epoch, "split": split, "metrics": clean_metrics(metrics)}
        )

    def checkpoint(self, step: int, path: PathLike, reason: str = "periodic") -> None:
        """Writes `checkpoint.saved`; `path` is made relative to the output directory.

        A path outside the output directory is not written: the event is dropped with
        a WARNING (writer rule 9).
        """
        if not self._active:
            return
        relative = self.relative_path(path)
        if relative is None:
            logger.warning("trainwire: checkpoint %s is outside the output directory; not written", path)
            return
        self._emit_active("checkpoint.saved", {"step": step, "path": relative, "reason": reason})

    def trial_started(self, trial: int, params: Mapping[str, Any] | None = None, attempt: int = 1) -> None:
        """Writes `trial.started`; parameter values that are not numbers, strings, booleans
        or None are written as their string form."""
        if not self._active:
            return
        with self._lock:
            self._trial_starts[(trial, attempt)] = self._monotonic()
            clean = {str(name): _param_value(value) for name, value in (params or {}).items()}
            self._emit("trial.started", {"trial": trial, "attempt": attempt, "params": clean})

    def trial_ended(
        self,
        trial: int,
        status: str,
        *,
        attempt: int = 1,
        metrics: Mapping[str, Any] | None = None,
        error: ErrorLike = None,
        best: Mapping[str, Any] | None = None,
    ) -> None:
        """Writes `trial.ended` (`succeeded`, `failed`, `pruned`) with the time since
        `trial_started`; `best` is the running best `{trial, metric, value}`."""
        if not self._active:
            return
        with self._lock:
            started = self._trial_starts.pop((trial, attempt), None)
            payload: dict[str, Any] = {
                "trial": trial,
                "attempt": attempt,
                "status": status,
                "duration_s": 0.0 if started is None else self._since(started),
                "metrics": clean_metrics(metrics),
                "error": error_info(error),
            }
            if best is not None:
                payload["best"] = dict(best)
            self._emit("trial.ended", payload)

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
        with self._lock:
            self.stop_reason = stop_reason(source, signal)
            self._emit(
                "stop.requested",
                {
                    "source": source,
                    "signal": signal,
                    "reason": _cut(reason),
                    "requested_by": _cut(requested_by),
                },
            )

    def heartbeat(self) -> None:
        """Writes `run.heartbeat` with the open phase and the last step (null when none)."""
        if not self._active:
            return
        with self._lock:
            phase = self._open_phases[-1][0] if self._open_phases else None
            self._emit("run.heartbeat", {"phase": phase, "step": self._last_step})

    def emit(self, event: str, **fields: Any) -> None:
        """Writes any event as given: extensions (`x_...` fields, new event names).

        An invalid event name, or a field that would overwrite the envelope, is dropped
        with a WARNING.
        """
        if not self._active:
            return
        if not isinstance(event, str) or _EVENT_RE.fullmatch(event) is None:
            logger.warning("trainwire: %r is not an event name (noun.verb); not written", event)
            return
        clashing = _ENVELOPE_KEYS.intersection(fields)
        if clashing:
            logger.warning("trainwire: %s: envelope fields %s are set by the writer; ignored", event, sorted(clashing))
            fields = {name: value for name, value in fields.items() if name not in clashing}
        with self._lock:
            if event == "run.finished" and not self._finished:
                self._emit(event, fields)
                self._mark_finished(str(fields.get("status")))
            else:
                self._emit(event, fields)

    def finish(
        self,
        status: str = "succeeded",
        *,
        error: ErrorLike = None,
        reason: str | None = None,
        metrics: Mapping[str, Any] | None = None,
        artifacts: Mapping[str, PathLike] | None = None,
        checkpoint: PathLike | None = None,
    ) -> None:
        """Writes `run.finished`, exactly once, then closes the run (later calls are ignored).

        An interrupted run without `reason` takes the one of its `stop.requested`.
        Paths outside the output directory are left out with a WARNING.
        """
        if not self._active:  # nothing to write, but the status (and exit code) holds on every rank
            if not self._finished:
                self._mark_finished(status)
            self._closed = True
            return
        with self._lock:
            if self._finished:
                logger.debug("trainwire: run %s already finished; finish(%r) ignored", self._run_id, status)
                return
            if reason is None and status == "interrupted":
                reason = self.stop_reason
            payload = {
                "status": status,
                "exit_code": EXIT_CODES.get(status),
                "error": error_info(error),
                "reason": reason,
                "step": self._last_step,
                "checkpoint": self._checkpoint_field(checkpoint),
                "duration_s": self._since(self._run_start),
                "metrics": clean_metrics(metrics),
                "artifacts": self._artifacts(artifacts),
            }
            self._emit("run.finished", payload)
            self._mark_finished(status)
        self.close()

    def close(self) -> None:
        """Stops the heartbeat and closes the sinks (without writing `run.finished`)."""
        self._stop_heartbeat()
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._dispatcher.close()

    def __enter__(self) -> Run:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> Literal[False]:
        if exc is None or (isinstance(exc, SystemExit) and exc.code in (None, 0)):
            self.finish("succeeded")
        elif isinstance(exc, RunInterrupted):
            self.finish("interrupted", reason=exc.reason)
        elif isinstance(exc, KeyboardInterrupt):
            self.finish("interrupted", reason=self.stop_reason or "sigint")
        else:
            self.finish("failed", error=exc)
        self.close()
        return False

    def __repr__(self) -> str:
        return f"Run(run_id={self._run_id!r}, status={self._status!r})"

    # -- paths ---------------------------------------------------------------------------

    def relative_path(self, path: PathLike) -> str | None:
        """`path` relative to the output directory with `/` separators, or None when it is
        outside (or cannot be written as a contract path).

        An absolute path, or a path relative to the working directory that lies inside
        the output directory, is made relative to it; any other relative path is taken
        as relative to the output directory already.
        """
        try:
            text = os.fspath(path)
            candidates = []
            if self.output_dir is not None:
                candidates.append(os.path.relpath(os.path.abspath(text), self.output_dir))
            if not os.path.isabs(text):
                candidates.append(text)
            for candidate in candidates:
                relative = os.path.normpath(candidate).replace(os.sep, "/")
                if relative != ".." and not relative.startswith("../") and _RELATIVE_PATH_RE.fullmatch(relative):
                    return relative
        except (TypeError, ValueError):  # not a path, or on another drive (Windows)
            pass
        return None

    # -- internals ------------------------------------------------------------------------

    def _emit_active(self, event: str, payload: dict[str, Any]) -> None:
        if not self._active:
            return
        with self._lock:
            self._emit(event, payload)

    # the methods below are called with the lock held

    def _emit(self, event: str, payload: dict[str, Any]) -> None:
        """Writes an event other than a fresh step: the pending step goes first."""
        if self._finished:
            logger.debug("trainwire: run %s already finished; %s not written", self._run_id, event)
            return
        self._flush_pending_step()
        line = self._envelope.copy()
        line["event"] = event
        line.update(payload)
        self._write(line)

    def _flush_pending_step(self) -> None:
        if self._pending_step is not None:
            line, reported_at, reported_mono = self._pending_step
            self._pending_step = None
            self._last_step_written = reported_mono
            self._write(line, reported_at)

    def _write(self, line: dict[str, Any], at: float | None = None) -> None:
        """Stamps `seq` and `ts` (now, or `at`) into an envelope copy and hands it to the sinks."""
        self._seq += 1
        line["seq"] = self._seq
        line["ts"] = format_ts(self._now() if at is None else at)
        try:
            encoded = encode_line(line)
        except Exception:
            self._seq -= 1  # nothing was written: keep seq gap-free
            logger.warning("trainwire: %s could not be encoded; not written", line["event"], exc_info=True)
            return
        self._dispatcher.dispatch(encoded, line)
        self._last_write = self._monotonic()

    def _mark_finished(self, status: str) -> None:
        self._finished = True
        self._status = status
        self._heartbeat_stop.set()

    def _since(self, start: float) -> float:
        # rounded to the microsecond, the precision of `ts`
        return _microseconds(self._monotonic() - start)

    def _close_phase(self, name: str) -> float | None:
        for index in range(len(self._open_phases) - 1, -1, -1):
            if self._open_phases[index][0] == name:
                return self._open_phases.pop(index)[1]
        logger.debug("trainwire: phase %r ended but was not started", name)
        return None

    def _provenance(self, provenance: bool | Mapping[str, Any], seed: int | None) -> dict[str, Any] | None:
        if isinstance(provenance, Mapping):
            return dict(provenance)
        if provenance:
            try:
                return collect_provenance(seed)
            except Exception:  # collect_provenance is best effort; be sure anyway
                logger.debug("trainwire: provenance not collected", exc_info=True)
        return {"seed": seed} if seed is not None else None

    def _resumed_from(self, resumed_from: Mapping[str, Any]) -> dict[str, Any]:
        checkpoint = resumed_from.get("checkpoint")
        return {
            "run_id": resumed_from.get("run_id"),
            "checkpoint": None if checkpoint is None else self._checkpoint_field(checkpoint),
            "step": resumed_from.get("step"),
        }

    def _checkpoint_field(self, path: PathLike | None) -> str | None:
        if path is None:
            return None
        relative = self.relative_path(path)
        if relative is None:
            logger.warning("trainwire: checkpoint %s is outside the output directory; written as null", path)
        return relative

    def _artifacts(self, artifacts: Mapping[str, PathLike] | None) -> dict[str, str]:
        kept = {}
        for name, path in (artifacts or {}).items():
            relative = self.relative_path(path)
            if relative is None:
                logger.warning("trainwire: artifact %s (%s) is outside the output directory; left out", name, path)
            else:
                kept[str(name)] = relative
        return kept

    # -- heartbeat ---------------------------------------------------------------------

    def _start_heartbeat(self) -> None:
        if self._heartbeat is not None or self._finished:
            return
        self._heartbeat = threading.Thread(target=self._beat, name=f"trainwire-heartbeat-{self._run_id}", daemon=True)
        self._heartbeat.start()

    def _beat(self) -> None:
        interval = self._heartbeat_interval_s
        assert interval is not None
        wait = interval
        while not self._heartbeat_stop.wait(wait):
            idle = self._monotonic() - self._last_write
            if idle >= interval:
                self.heartbeat()
                wait = interval
            else:
                wait = interval - idle

    def _stop_heartbeat(self) -> None:
        self._heartbeat_stop.set()
        thread = self._heartbeat
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5.0)


def new_run_id(epoch_seconds: float | None = None) -> str:
    """A fresh run id: `<UTC yyyymmddTHHMMSS>-<6 hex digits>`."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(time.time() if epoch_seconds is None else epoch_seconds))
    return f"{stamp}-{secrets.token_hex(3)}"


def error_info(error: ErrorLike) -> dict[str, str] | None:
    """`{type, message}` (both cut to 200 characters) from an exception, a `(type, message)`
    pair or a mapping; None stays None."""
    if error is None:
        return None
    if isinstance(error, BaseException):
        kind: Any = type(error).__name__
        message: Any = safe_str(error)
    elif isinstance(error, tuple) and len(error) == 2:
        kind, message = error
        kind = getattr(kind, "__name__", kind)
    elif isinstance(error, Mapping):
        kind, message = error.get("type"), error.get("message", "")
    else:
        kind, message = "Error", error
    return {"type": safe_str(kind)[:_MESSAGE_LIMIT] or "Error", "message": safe_str(message)[:_MESSAGE_LIMIT]}


def clean_metrics(metrics: Mapping[str, Any] | None) -> dict[str, Any]:
    """A metrics map the contract accepts: numbers and None kept, numpy/tensor scalars made
    numbers, other values and bad names left out."""
    if not metrics:
        return {}
    clean: dict[str, Any] = {}
    for name, value in metrics.items():
        key = str(name)
        if not 1 <= len(key) <= 256:
            continue
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            value = to_scalar(value)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                logger.debug("trainwire: metric %r is not a number (%r); left out", key, value)
                continue
        clean[key] = value
    return clean


def _microseconds(seconds: float) -> float:
    """Seconds rounded to the microsecond (the precision of `ts`), never negative.

    Keeps fake-clock durations exact (0.3, not 0.30000000000000004); cheaper than round().
    """
    return int(seconds * 1_000_000 + 0.5) / 1_000_000 if seconds > 0 else 0.0


def _param_value(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    scalar = to_scalar(value)
    return scalar if isinstance(scalar, (bool, int, float)) else safe_str(value)


def _cut(text: str | None) -> str | None:
    return None if text is None else text[:_MESSAGE_LIMIT]

