"""Keras 3 integration: `attach(model)` or `callbacks=[TrainwireCallback(...)]` (`callback`)."""

from trainwire.integrations.keras.callback import STOP_CHECKPOINT, TrainwireCallback, attach

__all__ = ["STOP_CHECKPOINT", "TrainwireCallback", "attach"]
