"""The Kubeflow reporter: a run's progress posted to its TrainJob, off the training thread.

`offer(event)` costs the caller an append (a `train.step` only replaces the latest one held);
a daemon thread folds what came (`lines.state_fold`), maps it (`progress.progress_of`,
`status_body`) and posts it (`client.StatusClient`): at the run's start, at each evaluation
and trial's end (at most one a second), at its end, and between them at most once per
`interval_s` when something changed. A post that fails is retried with backoff on a 5xx or a
timeout; the first failure is logged (WARNING, once per kind), the next ones at DEBUG, and
none reaches training. `close()` waits at most `finish_wait_s` for the last post.
As a writer sink (`write`) it carries no stream: it never counts as a lost line.
"""

from __future__ import annotations

import collections
import logging
import os
import threading
import time
from collections.abc import Callable, MutableMapping
from datetime import datetime, timezone
from typing import Any

from trainwire.lines.state_fold import RunStateFold, fold_kept_step
from trainwire.writer.kubeflow.client import Posted, StatusClient
from trainwire.writer.kubeflow.environment import StatusEndpoint, claim_reporting, release_reporting
from trainwire.writer.kubeflow.progress import progress_of
from trainwire.writer.kubeflow.status_body import status_body

__all__ = ["FINISH_WAIT_S", "PROMPT_EVENTS", "KubeflowReporter"]

logger = logging.getLogger("trainwire.writer.kubeflow")

#: events posted without waiting for the interval (evaluations and trials at most once a second)
PROMPT_EVENTS = frozenset({"run.started", "eval.completed", "trial.ended", "run.finished"})
#: the longest `close()` (the run's end) waits for the last post
FINISH_WAIT_S = 2.0
_PROMPT_GAP_S = 1.0
#: events held for the thread; past it the oldest go (the thread drains it every pass)
_PENDING_LIMIT = 10_000


class KubeflowReporter:
    """Reports the runs it is offered to one TrainJob (the last run started, in a stream of several)."""

    def __init__(
        self,
        endpoint: StatusEndpoint,
        *,
        interval_s: float,
        finish_wait_s: float = FINISH_WAIT_S,
        client: StatusClient | None = None,
        environ: MutableMapping[str, str] | None = None,
        claim: bool = True,
        saved: dict[str, Any] | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.interval_s = interval_s
        self.finish_wait_s = finish_wait_s
        self.client = client if client is not None else StatusClient(endpoint, sleep=self._retry_wait)
        self._environ = environ if environ is not None else os.environ
        self._claim = claim
        self._claimed = False
        self._now = clock if clock is not None else (lambda: datetime.now(timezone.utc))
        self._pending: collections.deque[dict[str, Any]] = collections.deque(maxlen=_PENDING_LIMIT)
        self._latest_step: dict[str, Any] | None = None
        self._wake = threading.Event()
        self._closing = threading.Event()
        self._thread: threading.Thread | None = None
        self._off = False
        self._fold = RunStateFold(resume=saved["reader"] if saved else None)
        self._run_id: str | None = saved.get("run_id") if saved else None
        self._total_epochs: dict[str, float | None] = dict(saved.get("total_epochs", {})) if saved else {}
        self._folded_step_seq = 0
        self._changed = False
        self._prompt = False
        self._last_post = float("-inf")
        self._deadline = float("inf")  # set by close(): retries stop past it
        self._warned: set[str] = set()
        #: posts that the server took, and the last body sent (for the export's summary and tests)
        self.posted = 0
        self.last_body: bytes | None = None

    # -- the caller's side (the training thread): cheap, never raises ----------------------

    def write(self, line: bytes, event: dict[str, Any]) -> None:
        """As a writer sink: each line's event."""
        self.offer(event)

    def offer(self, event: dict[str, Any]) -> None:
        if self._off:
            return
        name = event.get("event")
        if name == "train.step" and "seq" in event:
            self._latest_step = event  # only the latest matters: the thread folds it in its place
        else:
            self._pending.append(event)
            if name in PROMPT_EVENTS:
                self._wake.set()
        if self._thread is None:
            if self._claim and not self._claimed:
                self._claimed = claim_reporting(self._environ)
                if not self._claimed:
                    self._off = True
                    logger.info("trainwire: another run or process reports to this TrainJob; this run does not")
                    return
            self._thread = threading.Thread(target=self._loop, name="trainwire-kubeflow", daemon=True)
            self._thread.start()

    def close(self, wait_s: float | None = None) -> None:
        """Posts what is left and waits at most `wait_s` (default `finish_wait_s`) for it."""
        self._deadline = time.monotonic() + (self.finish_wait_s if wait_s is None else wait_s)
        self._closing.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(self.finish_wait_s if wait_s is None else wait_s)
        if self._claimed:
            self._claimed = False
            release_reporting(self._environ)

    def state(self) -> dict[str, Any]:
        """What an export needs to go on: the fold and the run reported (call after `close`)."""
        reader = {
            "runs": [run.to_dict() for run in self._fold.runs.values()],
            "unknown_events": self._fold.unknown_events,
            "diagnostics": [],
        }
        return {"reader": reader, "run_id": self._run_id, "total_epochs": self._total_epochs}

    # -- the reporter's thread ----------------------------------------------------------------

    def _loop(self) -> None:
        try:
            while True:
                wait = self._due_in()
                self._wake.wait(wait)
                self._wake.clear()
                self._fold_new()
                closing = self._closing.is_set()
                if self._changed and (closing or self._due_in() <= 0):
                    self._post()
                if closing and not self._pending and not self._changed:
                    return
        except Exception:  # a bug here must never reach training: the reporter goes quiet
            logger.warning("trainwire: the Kubeflow reporter stopped", exc_info=True)
            self._off = True

    def _due_in(self) -> float | None:
        """Seconds until the next post may go; None when there is nothing to post."""
        if not self._changed:
            return None if not self._closing.is_set() else 0.0
        since = time.monotonic() - self._last_post
        gap = _PROMPT_GAP_S if self._prompt else self.interval_s
        return max(gap - since, 0.0)

    def _fold_new(self) -> None:
        step = self._latest_step  # read first: any event drained after it is not older than it
        events = []
        while self._pending:
            events.append(self._pending.popleft())
        if step is not None and step["seq"] > self._folded_step_seq:
            self._folded_step_seq = step["seq"]
            events.append(step)
            events.sort(key=lambda event: event.get("seq", 0))
        for event in events:
            self._fold_one(event)
        # the steps skipped here are gaps to the fold: nothing the reporter shows, so not kept
        self._fold.diagnostics.clear()
        for run in self._fold.runs.values():
            run.seq_gaps.clear()

    def _fold_one(self, event: dict[str, Any]) -> None:
        name = event.get("event")
        if name == "run.started":
            self._run_id = event.get("run_id")
            self._total_epochs[str(self._run_id)] = event.get("total_epochs")
            self._last_post = float("-inf")  # a run's start is posted at once
        if "seq" in event:
            applied = self._fold.apply(0, event)
        else:  # a step the stream's throttle left out (the export's, from the run's journal)
            run = self._fold.runs.get(event.get("run_id", ""))
            applied = run is not None
            if run is not None:
                fold_kept_step(run, event)
        if applied and event.get("run_id") == self._run_id:
            self._changed = True
            self._prompt = self._prompt or name in PROMPT_EVENTS
            if name in ("run.started", "run.finished"):
                self._last_post = float("-inf")

    def _post(self) -> None:
        run = self._fold.runs.get(str(self._run_id))
        if run is None:
            return
        body = status_body(progress_of(run.to_dict(), total_epochs=self._total_epochs.get(run.run_id)), self._now())
        self._changed = self._prompt = False
        self._last_post = time.monotonic()
        outcome = self.client.post(body)
        if outcome.ok:
            self.posted += 1
            self.last_body = body
            if self._warned:
                logger.info("trainwire: the TrainJob takes the run's status again")
                self._warned.clear()
        else:
            self._failed(outcome)

    def _failed(self, outcome: Posted) -> None:
        kind = outcome.why.split(" ", 2)[:2]
        key = " ".join(kind)
        if key in self._warned:
            logger.debug("trainwire: the run's status was not posted to the TrainJob: %s", outcome.why)
            return
        self._warned.add(key)
        logger.warning(
            "trainwire: the run's status was not posted to its TrainJob (%s); training goes on, "
            "later posts are tried (set TRAINWIRE_KUBEFLOW=0 to stop reporting)",
            outcome.why,
        )

    def _retry_wait(self, seconds: float) -> bool:
        """Waits before a retry; True (give up) when the wait would end past `close()`'s."""
        if time.monotonic() + seconds > self._deadline:
            return True
        self._closing.wait(seconds)
        return time.monotonic() + seconds > self._deadline
