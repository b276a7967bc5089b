"""The trials of a search `Run` writes: `trial.started`, `trial.ended`, the `trial()` block and
`trial_scope()`, which stamps a thread's events with its trial."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from trainwire.contract.status import status_for_exception
from trainwire.writer.arguments import TRIAL_STATUSES
from trainwire.writer.fields import ErrorLike, param_value
from trainwire.writer.payloads import trial_ended_payload
from trainwire.writer.scopes import TrialOutcome
from trainwire.writer.training_events import _TrainingEvents
from trainwire.writer.values import integer

__all__: list[str] = []  # a base of `Run` only


class _TrialEvents(_TrainingEvents):
    """A search's trials (their time in the open spans), each starting its own step
    bookkeeping afresh (a trial is training: hence the base), and the thread's trial scope."""

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
            self._new_trial_attempt(trial)
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
            if self._spans.trial_ended_before(counted["trial"], counted["attempt"]):
                self._complain.warn_once(
                    "trial ended twice",
                    f"trial {counted['trial']} attempt {counted['attempt']} already ended; a second trial.ended is not written",
                )
                return
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
    def trial_scope(self, number: int, *, opening: Callable[[], object] | None = None) -> Iterator[None]:
        """The events this thread writes inside carry trial `number`, and nothing more: no
        `trial.started` or `trial.ended` (for a search whose own callbacks write those).
        `opening` is called once, before the first event the thread writes inside: a search
        that writes `trial.started` late (Optuna's, once the params are sampled) writes it
        there, so that no event of the trial precedes it."""
        counted = integer(number, 1)
        self._scopes.trials.append(counted if isinstance(counted, int) else None)
        self._scopes.openings.append(opening)
        try:
            yield
        finally:
            self._scopes.trials.pop()
            self._scopes.openings.pop()

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
