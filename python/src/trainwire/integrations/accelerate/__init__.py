"""Accelerate integration: `Accelerator(log_with=[TrainwireTracker(...)])` (`tracker`)."""

from trainwire.integrations.accelerate.tracker import EVAL_PREFIXES, TrainwireTracker

__all__ = ["EVAL_PREFIXES", "TrainwireTracker"]
