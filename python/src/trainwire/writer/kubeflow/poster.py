"""One post of a run's progress, and what is said when it fails: the first failure of each
kind at WARNING, the same again at DEBUG, and INFO once posts go through again."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timezone

from trainwire.writer.kubeflow.client import StatusClient
from trainwire.writer.kubeflow.progress import RunProgress
from trainwire.writer.kubeflow.status_body import status_body

__all__ = ["ProgressPoster"]

logger = logging.getLogger("trainwire.writer.kubeflow")


class ProgressPoster:
    """Posts progress through `client`; `post` never raises."""

    def __init__(self, client: StatusClient, *, clock: Callable[[], datetime] | None = None) -> None:
        self.client = client
        self._now = clock if clock is not None else (lambda: datetime.now(timezone.utc))
        self._warned: set[str] = set()
        #: posts the server took, and the last body it took
        self.posted = 0
        self.last_body: bytes | None = None

    def post(self, progress: RunProgress) -> bool:
        body = status_body(progress, self._now())
        outcome = self.client.post(body)
        if outcome.ok:
            self.posted += 1
            self.last_body = body
            if self._warned:
                logger.info("trainwire: the TrainJob takes the run's status again")
                self._warned.clear()
            return True
        kind = " ".join(outcome.why.split(" ", 2)[:2])
        if kind in self._warned:
            logger.debug("trainwire: the run's status was not posted to its TrainJob: %s", outcome.why)
        else:
            self._warned.add(kind)
            logger.warning(
                "trainwire: the run's status was not posted to its TrainJob (%s); training goes on, "
                "later posts are tried (TRAINWIRE_KUBEFLOW=0 stops reporting)",
                outcome.why,
            )
        return False
