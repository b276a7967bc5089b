"""Reporting a run's progress to its Kubeflow Trainer TrainJob (`TrainJob.status.trainerStatus`).

`reporter_for_run` is what `Run` asks for (docs/integrations.md, "Kubeflow Trainer"); the export
(`trainwire export kubeflow`) uses the same fold, mapping and poster. Outside a TrainJob nothing
more is imported: the reporter, with `urllib` and `ssl`, only when a run reports.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from typing import TYPE_CHECKING

from trainwire.writer.kubeflow.environment import claimed_elsewhere, endpoint_from, interval_from, reporting_wanted

if TYPE_CHECKING:
    from trainwire.writer.kubeflow.reporter import KubeflowReporter

__all__ = ["reporter_for_run", "reports_in_this_process"]


def reports_in_this_process(asked: bool | None = None, environ: MutableMapping[str, str] | None = None) -> bool:
    """True when a run of this process (global rank 0) would report to a TrainJob: the three
    variables set, not turned off, no other process reporting for the job."""
    environ = os.environ if environ is None else environ
    return endpoint_from(environ) is not None and reporting_wanted(asked, environ) and not claimed_elsewhere(environ)


def reporter_for_run(asked: bool | None) -> KubeflowReporter | None:
    """The reporter of a run (on global rank 0) made with `Run(kubeflow=asked)`; None when it does not report."""
    endpoint = endpoint_from(os.environ)
    if endpoint is None or not reports_in_this_process(asked):
        return None
    from trainwire.writer.kubeflow.reporter import KubeflowReporter  # urllib and ssl: only inside a TrainJob

    return KubeflowReporter(endpoint, interval_s=interval_from(os.environ))
