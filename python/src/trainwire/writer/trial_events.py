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
from trainwire.writer.run_core import RunCore
from trainwire.writer.scopes import TrialOutcome
from trainwire.writer.step_progress import StepProgress
from trainwire.writer.values import integer

__all__ = ["TrialEvents"]


class TrialEvents:
    """A search's trials, each with its own step bookkeeping, and the thread's trial scope;
    each method is `Run`'s of the same name, documented there."""

    def __init__(self, core: RunCore) -> None:
        self._core = core

    def trial_started(
        self, trial: int, params: Mapping[str, Any] | None = None, attempt: int = 1, *, baseline: bool = False
    ) -> None:
        core = self._core
        counted = core.args.counts("trial.started", trial=(trial, 1), attempt=(attempt, 1)) if core.active else None
        if counted is None:
            return
        trial, attempt = counted["trial"], counted["attempt"]
        with core.lock:
            core.spans.open_trial(trial, attempt)
            core.lines.flush_pending()  # before its bookkeeping is replaced
            core.trial_steps[trial] = StepProgress(core.steps.interval_s, core.steps.total_steps)
            clean = {str(name): param_value(value) for name, value in (params or {}).items()}
            payload: dict[str, Any] = {"trial": trial, "attempt": attempt, "params": clean}
            if baseline:
                payload["baseline"] = True
            core.emit("trial.started", payload)

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
        core = self._core
        counted = core.args.counts("trial.ended", trial=(trial, 1), attempt=(attempt, 1)) if core.active else None
        if counted is None:
            return
        if not core.args.one_of(
            "trial.ended.status", "trial status", status, TRIAL_STATUSES, "trial.ended not written"
        ):
            return
        with core.lock:
            if core.spans.trial_ended_before(counted["trial"], counted["attempt"]):
                core.complain.warn_once(
                    "trial ended twice",
                    f"trial {counted['trial']} attempt {counted['attempt']} already ended; a second trial.ended is not written",
                )
                return
            duration = core.spans.close_trial(counted["trial"], counted["attempt"])
            core.emit(
                "trial.ended",
                trial_ended_payload(core.args, counted, status, duration, metrics, error, best, accepted),
            )

    @contextlib.contextmanager
    def trial(
        self, number: int, params: Mapping[str, Any] | None = None, attempt: int = 1, *, baseline: bool = False
    ) -> Iterator[TrialOutcome]:
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
        core = self._core
        counted = integer(number, 1)
        core.scopes.trials.append(counted if isinstance(counted, int) else None)
        core.scopes.openings.append(opening)
        try:
            yield
        finally:
            core.scopes.trials.pop()
            core.scopes.openings.pop()

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
