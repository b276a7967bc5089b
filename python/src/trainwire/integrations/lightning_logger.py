"""The path `trainwire.integrations.lightning_logger` from before the framework folders:
`TrainwireLogger` (also exported by `trainwire.integrations.lightning`)."""

from trainwire.integrations.lightning.logger import VALIDATION_PREFIXES, TrainwireLogger

__all__ = ["VALIDATION_PREFIXES", "TrainwireLogger"]
