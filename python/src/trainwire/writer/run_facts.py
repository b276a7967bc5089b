"""What a run can be asked about itself (its id, status, exit code, ...): the read-only
properties of `Run`, apart from its events, each answered by the collaborator that owns it."""

from __future__ import annotations

from trainwire.writer.run_core import RunCore
from trainwire.writer.run_lifetime import RunLifetime

__all__ = ["RunFacts"]


class RunFacts:
    """The read-only properties of a `Run` (its base: built only by `Run.__init__`)."""

    _core: RunCore
    _lifetime: RunLifetime

    @property
    def run_id(self) -> str:
        """The run's id (`run_id` given, or a new one)."""
        return self._core.run_id

    @property
    def output_dir(self) -> str | None:
        """The absolute output directory, or None without one."""
        return self._core.output_dir

    @property
    def name(self) -> str | None:
        """The run's name (`run.started.name`), or None."""
        return self._core.name

    @property
    def tags(self) -> list[str]:
        """The run's tags (`run.started.tags`)."""
        return list(self._core.tags or ())

    @property
    def status(self) -> str | None:
        """The `run.finished` status, or None until the run finished."""
        return self._core.status

    @property
    def exit_code(self) -> int | None:
        """The process exit code: the host's own given to `finish()`, else the final status's
        (see `EXIT_CODES`); None until finished."""
        return self._core.exit_code

    @property
    def reports_to_kubeflow(self) -> bool:
        """True when the run posts its progress to a Kubeflow TrainJob's status."""
        return self._core.kubeflow is not None

    @property
    def stop_reason(self) -> str | None:
        """The `run.finished` reason of the latest `stop.requested` (`stop_reason`), or None."""
        return self._lifetime.stop_reason

    @property
    def last_step(self) -> int | None:
        """The last step reported (written or not, in any trial), or None before the first."""
        return self._core.last_step

    @property
    def current_trial(self) -> int | None:
        """The trial of the calling thread's innermost `trial_scope` (or `trial()`), else None."""
        return self._core.scopes.trial

    @property
    def started(self) -> bool:
        """Whether `run.started` was written (always False on a rank that does not write)."""
        return self._core.started

    @property
    def closed(self) -> bool:
        """Whether the sinks are closed (`close()`, `finish()`)."""
        return self._core.closed

    @property
    def active(self) -> bool:
        """Whether this process writes (global rank 0)."""
        return self._core.active
