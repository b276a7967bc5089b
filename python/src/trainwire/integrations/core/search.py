"""The run of a hyperparameter search, shared by the search engines' integrations: one run
for the whole search (each trial a trial of it), the stop it watches, and how it ends.

The search is driven by an engine (Optuna, Ray Tune) that stops through its own API; this
module only says whether a stop was honoured, and the adapter asks the engine to stop."""

from __future__ import annotations

import logging
import os
from typing import Any

from trainwire.integrations.core.lifecycle import watched_stop
from trainwire.stop import StopControl, StopRequest
from trainwire.writer.run import Run

__all__ = ["OwnedSearchRun"]

logger = logging.getLogger("trainwire.integrations.search")


class OwnedSearchRun:
    """The run of a search (owned unless `run` is given) and its stop control.

    `begin` starts an owned run and installs the signal handlers (main thread only);
    `end(error)` removes them and finishes an owned run: `interrupted` after a stop,
    as `error` says otherwise (`Run.finish_for`). A caller's run is the caller's to finish.
    """

    def __init__(
        self,
        output_dir: str | os.PathLike[str] | None,
        *,
        run: Run | None,
        stop: bool | StopControl,
        signals: bool,
        check_interval_s: float,
        **run_options: Any,
    ) -> None:
        self.owns_run = run is None
        self.run = Run(output_dir, **run_options) if run is None else run
        if isinstance(stop, StopControl):
            self.stop: StopControl | None = stop
        elif stop:
            self.stop = watched_stop(self.run, zero=True, directory=output_dir, check_interval_s=check_interval_s)
        else:
            self.stop = None
        self._signals = signals
        self._installed = False

    @property
    def stopped(self) -> bool:
        """True once a stop was honoured."""
        return self.stop is not None and self.stop.honoured is not None

    def begin(self, **start: Any) -> None:
        if self.owns_run:
            self.run.start(**start)
        if self._signals and self.stop is not None and not self.stop.handles_signals:
            try:
                self.stop.install_signal_handlers()
                self._installed = True
            except RuntimeError as error:  # not the main thread
                logger.warning("trainwire: stop signals not handled: %s", error)

    def poll_stop(self) -> StopRequest | None:
        """The honoured stop, if any (the same one on every later call)."""
        return self.stop.check() if self.stop is not None else None

    def end(self, error: BaseException | None) -> None:
        if self._installed and self.stop is not None:
            self.stop.uninstall()
            self._installed = False
        if not self.owns_run:
            return
        if self.poll_stop() is not None and error is None:
            self.run.finish("interrupted")
        else:
            self.run.finish_for(error)
