"""The Kubeflow reporter: a run's progress posted to its TrainJob, off the training thread.

`offer(event)` costs the caller an append (a `train.step` only replaces the latest one held);
a daemon thread folds what came (`fold.ProgressFold`), maps it (`progress.progress_of`,
`status_body`) and posts it (`poster.ProgressPoster`): at the run's start and end at once, at
each evaluation and trial's end (at most one a second), and between them at most once per
`interval_s` when something changed. A post that fails is retried with backoff on a 5xx or a
timeout (`client`), logged once, and never reaches training. `close()` waits at most
`finish_wait_s` for the last post. As a writer sink it carries no stream (no lost lines).
"""

from __future__ import annotations

import collections
import logging
import os
import threading
import time
from collections.abc import MutableMapping
from typing import Any

from trainwire.writer.kubeflow.client import StatusClient
from trainwire.writer.kubeflow.environment import StatusEndpoint, claim_reporting, release_reporting
from trainwire.writer.kubeflow.fold import PROMPT_EVENTS, ProgressFold
from trainwire.writer.kubeflow.poster import ProgressPoster

__all__ = ["FINISH_WAIT_S", "PROMPT_GAP_S", "KubeflowReporter"]

logger = logging.getLogger("trainwire.writer.kubeflow")

#: the longest `close()` (the run's end) waits for the last post
FINISH_WAIT_S = 2.0
#: evaluations and trials' ends are posted at once, but at most one a second
PROMPT_GAP_S = 1.0
#: events held for the thread; past it the oldest go (the thread drains it every pass)
_PENDING_LIMIT = 10_000


class KubeflowReporter:
    """Reports the run it is offered to one TrainJob; claims the job's reporting (`environment`)."""

    def __init__(
        self,
        endpoint: StatusEndpoint,
        *,
        interval_s: float,
        finish_wait_s: float = FINISH_WAIT_S,
        environ: MutableMapping[str, str] | None = None,
    ) -> None:
        self.interval_s = interval_s
        self.finish_wait_s = finish_wait_s
        self.poster = ProgressPoster(StatusClient(endpoint, sleep=self._retry_wait))
        self._environ = environ if environ is not None else os.environ
        self._claimed = False
        self._pending: collections.deque[dict[str, Any]] = collections.deque(maxlen=_PENDING_LIMIT)
        self._latest_step: dict[str, Any] | None = None
        self._wake = threading.Event()
        self._closing = threading.Event()
        self._deadline = float("inf")  # set by close(): retries stop past it
        self._thread: threading.Thread | None = None
        self._off = False
        self._fold = ProgressFold()
        self._folded_step_seq = 0
        self._last_post = float("-inf")

    # -- the caller's side (the training thread): cheap, never raises ----------------------

    def write(self, line: bytes, event: dict[str, Any]) -> None:
        """As a writer sink: each line's event; a step once the thread runs, in one assignment."""
        if self._thread is not None and event["event"] == "train.step":
            self._latest_step = event
        else:
            self.offer(event)

    def offer(self, event: dict[str, Any]) -> None:
        if self._off:
            return
        if event.get("event") == "train.step":
            self._latest_step = event  # only the latest matters: the thread folds it in its place
        else:
            self._pending.append(event)
            if event.get("event") in PROMPT_EVENTS:
                self._wake.set()
        if self._thread is None:
            self._claimed = claim_reporting(self._environ)
            if not self._claimed:
                self._off = True
                logger.info("trainwire: another run or process reports to this TrainJob; this run does not")
                return
            self._thread = threading.Thread(target=self._loop, name="trainwire-kubeflow", daemon=True)
            self._thread.start()

    def close(self) -> None:
        """Posts what is left and waits at most `finish_wait_s` for it."""
        self._deadline = time.monotonic() + self.finish_wait_s
        self._closing.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(self.finish_wait_s)
        if self._claimed:
            self._claimed = False
            release_reporting(self._environ)

    # -- the reporter's thread ----------------------------------------------------------------

    def _loop(self) -> None:
        try:
            while True:
                self._wake.wait(self._due_in())
                self._wake.clear()
                self._fold_new()
                closing = self._closing.is_set()
                if self._fold.changed and (closing or self._due_in() == 0):
                    self._post()
                if closing and not self._pending and not self._fold.changed:
                    return
        except Exception:  # a bug here must never reach training: the reporter goes quiet
            logger.warning("trainwire: the Kubeflow reporter stopped", exc_info=True)
            self._off = True

    def _due_in(self) -> float | None:
        """Seconds until the next post may go; None when there is nothing to post."""
        if not self._fold.changed:
            return 0.0 if self._closing.is_set() else None
        if self._fold.now:
            return 0.0
        gap = PROMPT_GAP_S if self._fold.prompt else self.interval_s
        return max(gap - (time.monotonic() - self._last_post), 0.0)

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
            self._fold.add(event)

    def _post(self) -> None:
        progress = self._fold.progress()
        if progress is not None:
            self._last_post = time.monotonic()
            self.poster.post(progress)

    def _retry_wait(self, seconds: float) -> bool:
        """Waits before a retry; True (give up) when the wait would end past `close()`'s."""
        if time.monotonic() + seconds > self._deadline:
            return True
        self._closing.wait(seconds)
        return time.monotonic() + seconds > self._deadline
