"""The path `trainwire.integrations.ray_tune` from before the framework folders: `TuneSearch`."""

from trainwire.integrations.ray.tune import TuneSearch

__all__ = ["TuneSearch"]
