"""The path `trainwire.integrations.ray_train` from before the framework folders: `TrainDriver`."""

from trainwire.integrations.ray.train import TrainDriver

__all__ = ["TrainDriver"]
