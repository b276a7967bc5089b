"""No double reporting to a Kubeflow TrainJob: transformers' own `KubeflowCallback` (registered
by the `Trainer` when `KUBEFLOW_TRAINER_SERVER_URL` is set and `report_to` is `"all"` or names it,
transformers 4.57 and later) stands
down when trainwire reports the job's progress: the attached run reports (`Run.reports_to_kubeflow`),
or another process of the job does (a search's driver, for a worker). Otherwise it stays: with
`Run(kubeflow=False)` or `TRAINWIRE_KUBEFLOW=0`, transformers' callback is the job's reporter.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any

from trainwire.writer.kubeflow.environment import claimed_elsewhere

if TYPE_CHECKING:
    from transformers import Trainer

    from trainwire.writer.run import Run

__all__ = ["kubeflow_callback_stands_down"]

logger = logging.getLogger("trainwire.integrations.transformers")


def kubeflow_callback_stands_down(trainer: Trainer, run: Run | None) -> None:
    """Takes transformers' `KubeflowCallback` off `trainer` when trainwire reports the job; never raises."""
    try:
        if not ((run is not None and run.reports_to_kubeflow) or claimed_elsewhere(os.environ)):
            return
        handler: Any = trainer.callback_handler
        theirs = [cb for cb in handler.callbacks if _is_transformers_kubeflow_callback(cb)]
        for callback in theirs:
            handler.remove_callback(callback)
    except Exception:  # a broken run or Trainer: its hooks say so; training goes on
        logger.debug("trainwire: transformers' KubeflowCallback was left as it is", exc_info=True)
        return
    if theirs:
        logger.info("trainwire: the run reports to the Kubeflow TrainJob; transformers' KubeflowCallback stands down")


def _is_transformers_kubeflow_callback(callback: Any) -> bool:
    # by name: the class is missing before transformers 4.57, and importing it loads every integration
    kind = type(callback)
    return kind.__name__ == "KubeflowCallback" and kind.__module__.startswith("transformers.")
