"""The stream into a Kubeflow TrainJob's status: `trainwire export kubeflow RUN [--follow]`,
for a stream written elsewhere (a sidecar container following a shared volume, a trainer in
another language, a CLI tool's `--progress json`).

The same mapping as the reporter a `Run` starts inside a TrainJob (`writer.kubeflow`): the
events are folded as a reader folds them, the last run started is the one reported, and its
progress is posted at its start, at each evaluation and trial's end (at most one a second), at
its end, and between them at most once per `interval_s` (when a line comes). Run again, the
export posts only what changed since (the cursor keeps the fold), and a status the TrainJob did
not take is posted again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from trainwire.export.dispatch import NotExported, handler_of
from trainwire.export.sync import Remember
from trainwire.writer.kubeflow.client import StatusClient
from trainwire.writer.kubeflow.environment import StatusEndpoint
from trainwire.writer.kubeflow.fold import ProgressFold
from trainwire.writer.kubeflow.poster import ProgressPoster
from trainwire.writer.kubeflow.reporter import PROMPT_GAP_S

__all__ = ["EVENT_HANDLERS", "KubeflowExporter"]


class KubeflowExporter:
    """Posts the progress of the stream's last run to one TrainJob; its state is the fold's."""

    #: a status replaces the one before: a batch is only how often the fold is looked at
    batch_events = 5000

    def __init__(
        self,
        endpoint: StatusEndpoint,
        saved: Mapping[str, Any] | None,
        *,
        interval_s: float,
        client: StatusClient | None = None,
    ) -> None:
        self.interval_s = interval_s
        self.fold = ProgressFold(dict(saved) if saved else None)
        self.poster = ProgressPoster(client if client is not None else StatusClient(endpoint))
        #: the last change was not taken by the TrainJob (posted again, by this export or the next)
        self.unposted = bool(saved and saved.get("unposted"))
        self.fold.changed = self.fold.changed or self.unposted
        self._last_post = float("-inf")

    def write(self, events: list[dict[str, Any]], remember: Remember) -> None:
        """Folds `events` and posts when due; a TrainJob has no run to make, so nothing to `remember`."""
        for event in events:
            self.fold.add(event)
            handler = handler_of(EVENT_HANDLERS, event["event"])
            if handler is not None:
                handler(self)
        self._post_when_due()

    def state(self) -> dict[str, Any]:
        return {**self.fold.state(), "unposted": self.unposted or self.fold.changed}

    def close(self) -> None:
        if self.fold.changed:
            self._post()

    # -- the handlers of EVENT_HANDLERS ---------------------------------------------------

    def _post_at_once(self) -> None:
        self._post()

    def _post_when_due(self) -> None:
        if not self.fold.changed:
            return
        gap = 0.0 if self.fold.now else PROMPT_GAP_S if self.fold.prompt else self.interval_s
        if time.monotonic() - self._last_post >= gap:
            self._post()

    def _post(self) -> None:
        progress = self.fold.progress()
        if progress is not None:
            self._last_post = time.monotonic()
            self.unposted = not self.poster.post(progress)


#: every tracker event (`TRACKER_EVENTS`, each event schema's `x-trainwire-tracker-event`) -> what the
#: exporter does beyond folding it into the progress; any other event is only folded (a test holds the keys)
EVENT_HANDLERS: dict[str, Callable[[KubeflowExporter], None] | NotExported] = {
    "run.started": KubeflowExporter._post_at_once,
    "trial.ended": KubeflowExporter._post_when_due,
    "run.finished": KubeflowExporter._post_at_once,
    "train.restarted": NotExported("a TrainJob's status shows where the run is (its step and ETA), not its attempts"),
    "checkpoint.saved": NotExported("a TrainJob's status has no checkpoints"),
    "trial.started": NotExported("counted in the trials, posted with the next status"),
}
